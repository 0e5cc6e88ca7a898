"""The new-campaign page and the settings page: parse, validate through the services, save."""

import html as html_module
import re

import pytest
from django.contrib.messages import get_messages
from django.db import models

from cfannotate.campaigns.forms import SCALAR_SETTINGS
from cfannotate.campaigns.models import Campaign, TaskType
from tests.factories import make_original, make_unit


def _settings_post(campaign: Campaign, **changes) -> dict:
    """The settings form as the page sends it unchanged, with some fields changed."""
    data = {name: getattr(campaign, name) for name in SCALAR_SETTINGS}
    data["use_polyjuice"] = "on"
    data.update(changes)
    return {key: value for key, value in data.items() if value is not None}


# ------------------------------------------------------------------------- new campaign


def test_new_campaign_page_lists_every_task_template(client, researcher):
    client.force_login(researcher)
    html = client.get("/campaigns/new/").content.decode()
    for value in TaskType.values:
        assert f'value="{value}"' in html
    assert "Definitely True" in html  # NLI labels from the template (Polyjuice Figure 5)
    assert "Generators: Polyjuice, and the causal negation and strengthening rules" in html


def test_new_campaign_needs_login(client):
    response = client.get("/campaigns/new/")
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_creating_a_campaign_from_a_template_redirects_to_its_page(client, researcher):
    client.force_login(researcher)
    response = client.post("/campaigns/new/", {"name": "SNLI probe", "task_type": "nli"})
    campaign = Campaign.objects.get(name="SNLI probe")
    assert response.status_code == 302
    assert response["Location"] == f"/campaigns/{campaign.id}/"
    assert campaign.owner == researcher
    assert (campaign.context_name, campaign.text_name) == ("Premise", "Hypothesis")
    assert list(campaign.labels.values_list("value", flat=True)) == [
        "entailment",
        "neutral",
        "contradiction",
    ]
    page = client.get(response["Location"]).content.decode()
    assert "Upload its dataset" in page
    assert campaign.generators == []  # the site default: Polyjuice
    client.post("/campaigns/new/", {"name": "Claims", "task_type": "causal_strength"})
    causal = Campaign.objects.get(name="Claims")
    assert causal.generator_names == ["polyjuice", "causal-negation", "causal-strengthen"]


def test_custom_campaign_takes_labels_one_per_line(client, researcher):
    client.force_login(researcher)
    client.post(
        "/campaigns/new/",
        {
            "name": "Sarcasm",
            "task_type": "custom",
            "labels": "Sarcastic: says the opposite\n\nSincere\n",
            "text_name": "Tweet",
        },
    )
    campaign = Campaign.objects.get(name="Sarcasm")
    labels = list(campaign.labels.values_list("value", "display_name", "description"))
    assert labels == [("sarcastic", "Sarcastic", "says the opposite"), ("sincere", "Sincere", "")]
    assert campaign.text_name == "Tweet" and campaign.context_name == ""


@pytest.mark.parametrize(
    ("data", "field", "message"),
    [
        ({"name": "", "task_type": "sentiment"}, "name", "This field is required."),
        ({"name": "X", "task_type": "poetry"}, "task_type", "Select a valid choice"),
        ({"name": "X", "task_type": "custom"}, "labels", "at least two labels"),
        ({"name": "X", "task_type": "custom", "labels": "Only one"}, "labels", "at least two"),
        ({"name": "X", "task_type": "custom", "labels": "A\na"}, "labels", "distinct"),
        (
            {"name": "X", "task_type": "custom", "labels": "S" * 70 + "\nOther"},
            "labels",
            "value is longer than 60 characters.",
        ),
        (
            {"name": "X", "task_type": "custom", "labels": "\n".join(f"L{n}" for n in range(60))},
            "labels",
            "At most 50 labels.",
        ),
    ],
)
def test_bad_new_campaign_input_is_shown_and_nothing_is_created(
    client, researcher, data, field, message
):
    client.force_login(researcher)
    response = client.post("/campaigns/new/", data)
    assert response.status_code == 400
    assert message in response.content.decode()
    assert message in " ".join(response.context["form"].errors.get(field, []))
    assert len(response.context["form"].errors[field]) == 1  # one reason, not a second guess
    assert not Campaign.objects.exists()


def _creation_token(html: str) -> str:
    return re.search(r'name="creation_token" value="([^"]+)"', html).group(1)


def test_a_new_campaign_form_sent_twice_makes_one_campaign(client, researcher):
    """A double click or a reload posts the same form again: the second answer is the
    campaign the first made, not another."""
    client.force_login(researcher)
    page = client.get("/campaigns/new/").content.decode()
    assert "data-submit-once" in page and "js/submit_once.js" in page
    data = {"name": "SNLI probe", "task_type": "nli", "creation_token": _creation_token(page)}

    first = client.post("/campaigns/new/", data)
    again = client.post("/campaigns/new/", data)

    campaign = Campaign.objects.get()
    assert first.status_code == again.status_code == 302
    assert again["Location"] == first["Location"] == f"/campaigns/{campaign.id}/"
    said = [str(message) for message in get_messages(again.wsgi_request)]
    assert "This form already created SNLI probe. It was not created twice." in said
    # A fresh form is a fresh token: the same name again is a second campaign.
    fresh = _creation_token(client.get("/campaigns/new/").content.decode())
    assert fresh != data["creation_token"]
    client.post("/campaigns/new/", {**data, "creation_token": fresh})
    assert Campaign.objects.count() == 2


def test_a_refused_new_campaign_form_keeps_its_token(client, researcher):
    client.force_login(researcher)
    token = _creation_token(client.get("/campaigns/new/").content.decode())

    refused = client.post(
        "/campaigns/new/", {"name": "", "task_type": "nli", "creation_token": token}
    )

    assert refused.status_code == 400
    assert _creation_token(refused.content.decode()) == token
    client.post("/campaigns/new/", {"name": "Fixed", "task_type": "nli", "creation_token": token})
    assert Campaign.objects.get().name == "Fixed"


def test_another_researchers_token_is_not_theirs_campaign(client, researcher, other_researcher):
    client.force_login(researcher)
    data = {"name": "Mine", "task_type": "nli", "creation_token": "same-token"}
    client.post("/campaigns/new/", data)
    client.force_login(other_researcher)
    client.post("/campaigns/new/", {**data, "name": "Theirs"})
    assert Campaign.objects.get(name="Theirs").owner == other_researcher


def test_new_campaign_form_is_csrf_protected(researcher):
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    client.force_login(researcher)
    response = client.post("/campaigns/new/", {"name": "X", "task_type": "sentiment"})
    assert response.status_code == 403
    assert not Campaign.objects.exists()


# ---------------------------------------------------------------------------- settings


def test_settings_page_shows_every_generator_and_the_paper_defaults(client, researcher, campaign):
    client.force_login(researcher)
    html = client.get(f"/campaigns/{campaign.id}/settings/").content.decode()
    for name in ("polyjuice", "lexicon-remove", "causal-negation", "concept-steered"):
        assert f'name="use_{name}"' in html
    assert 'name="use_polyjuice" id="id_use_polyjuice" checked' in html  # the default
    assert 'name="min_median_seconds" value="18.0"' in html  # Appendix C.2
    assert 'value="preposition"' in html  # a slicing function for targeting


def test_settings_of_another_owner_are_404(client, other_researcher, campaign):
    client.force_login(other_researcher)
    assert client.get(f"/campaigns/{campaign.id}/settings/").status_code == 404
    response = client.post(f"/campaigns/{campaign.id}/settings/", _settings_post(campaign))
    assert response.status_code == 404


def test_saving_settings_changes_only_what_changed(client, researcher, campaign):
    client.force_login(researcher)
    data = _settings_post(
        campaign,
        judgments_per_candidate=3,
        weight_tree="0.25",
        use_polyjuice="on",
        options_polyjuice='{"codes": ["negation", "quantifier"]}',
        **{"use_lexicon-remove": "on"},
        targeting_slices=["preposition"],
        targeting_code="resemantic",
    )
    response = client.post(f"/campaigns/{campaign.id}/settings/", data, HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    html = response.content.decode()
    assert "<html" not in html and 'id="settings-form"' in html
    assert "Saved: generators, judgments_per_candidate, targeting, weight_tree." in html
    campaign.refresh_from_db()
    assert campaign.judgments_per_candidate == 3 and campaign.weight_tree == 0.25
    assert campaign.generators == [
        {"name": "polyjuice", "codes": ["negation", "quantifier"]},
        {"name": "lexicon-remove"},
    ]
    assert campaign.targeting == {"slices": ["preposition"], "code": "resemantic"}

    again = client.post(
        f"/campaigns/{campaign.id}/settings/",
        _settings_post(
            campaign,
            **{
                "options_polyjuice": '{"codes": ["negation", "quantifier"]}',
                "use_lexicon-remove": "on",
                "targeting_slices": ["preposition"],
                "targeting_code": "resemantic",
            },
        ),
    )
    assert "Nothing changed." in again.content.decode()


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"options_polyjuice": "{codes: 1"}, "Not valid JSON"),
        ({"options_polyjuice": "[1, 2]"}, "An object of options"),
        ({"options_polyjuice": '{"codes": ["teleport"]}'}, "generators[0].codes"),
        ({"options_polyjuice": '{"blank_sets": "many"}'}, "generators[0].blank_sets"),
        ({"use_polyjuice": None}, "Choose at least one generator."),
        ({"targeting_code": "negation"}, "Choose the slices"),
        ({"judgments_per_candidate": 0}, "greater than or equal to 1"),
        ({"agreement_threshold": "1.5"}, "less than or equal to 1.0"),
        ({"lease_minutes": "soon"}, "Enter a whole number."),
        # Infinity and NaN, however spelt, are no numbers here.
        ({"fluency_threshold": "inf"}, "Enter a number."),
        ({"weight_base": "NaN"}, "Enter a number."),
        ({"min_median_seconds": "1e999"}, "Enter a number."),
        ({"bonus_amount": "Infinity"}, "Enter a number."),
        ({"lease_minutes": "1e999"}, "Enter a whole number."),
        ({"options_polyjuice": '{"temperature": 1e999}'}, "generators[0].temperature: Must be"),
        ({"options_polyjuice": '{"temperature": NaN}'}, "NaN is not a JSON number"),
        ({"options_polyjuice": "[" * 5000 + "]" * 5000}, "nested deeper than 64 levels"),
    ],
)
def test_bad_settings_are_shown_in_place_and_nothing_is_saved(
    client, researcher, campaign, changes, message
):
    before = Campaign.objects.values().get(pk=campaign.pk)
    client.force_login(researcher)
    response = client.post(
        f"/campaigns/{campaign.id}/settings/",
        _settings_post(campaign, **changes),
        HTTP_HX_REQUEST="true",
    )
    html = response.content.decode()
    assert response.status_code == 400
    assert message in html, html
    assert "Nothing was saved" in html
    assert Campaign.objects.values().get(pk=campaign.pk) == before


NUMBER_FIELDS = (models.IntegerField, models.FloatField, models.DecimalField)
NUMBER_SETTINGS = [
    name for name in SCALAR_SETTINGS if isinstance(Campaign._meta.get_field(name), NUMBER_FIELDS)
]


@pytest.mark.parametrize("name", [*NUMBER_SETTINGS, "server_concurrency", "server_timeout"])
@pytest.mark.parametrize("text", ["1_000", "\u0661\u0662", "1_0.5"])
def test_numbers_with_underscores_or_other_digits_are_refused(
    client, researcher, campaign, name, text
):
    """Python reads "1_000" as 1000 and Arabic-Indic "12" as 12: plain digits only here."""
    before = Campaign.objects.values().get(pk=campaign.pk)
    client.force_login(researcher)
    response = client.post(
        f"/campaigns/{campaign.id}/settings/",
        _settings_post(campaign, **{name: text}),
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 400
    assert "Use digits, e.g." in " ".join(response.context["form"].errors[name])
    assert Campaign.objects.values().get(pk=campaign.pk) == before


def test_bad_options_of_the_only_generator_are_not_also_no_generator(client, researcher, campaign):
    client.force_login(researcher)
    response = client.post(
        f"/campaigns/{campaign.id}/settings/",
        _settings_post(campaign, options_polyjuice="{bad"),
        HTTP_HX_REQUEST="true",
    )
    form = response.context["form"]
    assert response.status_code == 400
    assert form.errors["options_polyjuice"][0].startswith("Not valid JSON")
    assert "generators" not in form.errors
    assert "Choose at least one generator." not in response.content.decode()


@pytest.mark.parametrize("options", ['{"classifier": "vader"}', "{not json"])
def test_options_typed_for_an_unticked_generator_are_not_dropped_unsaid(
    client, researcher, campaign, options
):
    client.force_login(researcher)
    before = Campaign.objects.values().get(pk=campaign.pk)
    response = client.post(
        f"/campaigns/{campaign.id}/settings/",
        _settings_post(campaign, **{"options_lexicon-remove": options}),
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 400
    assert response.context["form"].errors["options_lexicon-remove"] == [
        "Tick lexicon-remove to use these options, or clear them."
    ]
    assert options.replace('"', "&quot;") in response.content.decode()  # still in its box
    assert Campaign.objects.values().get(pk=campaign.pk) == before


def _page_form(client, url: str) -> dict:
    """The settings form's fields as the page renders them (what a browser sends)."""
    html = client.get(url).content.decode()
    data = {}
    for tag in re.findall(r"<input [^>]*>", html):
        name = re.search(r'name="([^"]+)"', tag)
        if not name or 'type="submit"' in tag or name.group(1) == "csrfmiddlewaretoken":
            continue
        if 'type="checkbox"' in tag:
            if " checked" in tag:
                data.setdefault(name.group(1), []).append(
                    re.search(r'value="([^"]*)"', tag).group(1) if 'value="' in tag else "on"
                )
            continue
        value = re.search(r'value="([^"]*)"', tag)
        data[name.group(1)] = html_module.unescape(value.group(1)) if value else ""
    for name, text in re.findall(r'<textarea name="([^"]+)"[^>]*>(.*?)</textarea>', html, re.S):
        data[name] = html_module.unescape(text).removeprefix("\n")
    for name, body in re.findall(r'<select name="([^"]+)"[^>]*>(.*?)</select>', html, re.S):
        chosen = re.search(r'<option value="([^"]*)"[^>]*selected', body)
        first = re.search(r'<option value="([^"]*)"', body)
        data[name] = (chosen or first).group(1) if (chosen or first) else ""
    return data


def test_unticking_a_generator_with_options_turns_it_off(client, researcher, campaign):
    """The page shows a ticked generator's options in its box; unticking it and saving, the
    box unchanged, turns it off rather than asking to clear the box."""
    campaign.generators = [{"name": "polyjuice"}, {"name": "lexicon-remove", "classifier": "vader"}]
    campaign.save()
    client.force_login(researcher)
    url = f"/campaigns/{campaign.id}/settings/"
    data = _page_form(client, url)
    assert data["options_lexicon-remove"] == '{"classifier": "vader"}'
    assert data.pop("use_lexicon-remove") == ["on"]

    response = client.post(url, data, HTTP_HX_REQUEST="true")

    assert response.status_code == 200, response.context["form"].errors
    campaign.refresh_from_db()
    assert campaign.generators == [{"name": "polyjuice"}]
    # Unchanged, the page as rendered saves nothing and refuses nothing.
    again = client.post(url, _page_form(client, url), HTTP_HX_REQUEST="true")
    assert again.status_code == 200 and "Nothing changed." in again.content.decode()


def test_label_options_are_checked_against_the_campaign_labels(client, researcher, campaign):
    client.force_login(researcher)
    response = client.post(
        f"/campaigns/{campaign.id}/settings/",
        _settings_post(campaign, **{"use_causal-negation": "on"}),
    )
    assert response.status_code == 400
    assert "generators[1].source_labels" in response.content.decode()
    campaign.refresh_from_db()
    assert campaign.generators == []


def test_the_model_label_map_is_one_mapping_a_line_shown_back_as_saved(
    client, researcher, campaign
):
    client.force_login(researcher)
    url = f"/campaigns/{campaign.id}/settings/"
    text = "LABEL_0 = negative\n\nLABEL_1: Positive"
    response = client.post(url, _settings_post(campaign, flip_label_map=text))
    assert response.status_code == 200
    assert "Saved: flip_label_map." in response.content.decode()
    campaign.refresh_from_db()
    assert campaign.flip_label_map == {"LABEL_0": "negative", "LABEL_1": "positive"}

    page = client.get(url).content.decode()
    assert "Model label map" in page
    assert "LABEL_0 = negative\nLABEL_1 = positive</textarea>" in page


def test_bad_lines_of_the_model_label_map_are_named_and_nothing_is_saved(
    client, researcher, campaign
):
    client.force_login(researcher)
    before = Campaign.objects.values().get(pk=campaign.pk)
    response = client.post(
        f"/campaigns/{campaign.id}/settings/",
        _settings_post(
            campaign,
            flip_label_map="LABEL_0 = negative\nLABEL_0 = positive\nLABEL_1 = sarcastic",
            weight_tree="0.25",
        ),
        HTTP_HX_REQUEST="true",
    )
    html = response.content.decode()
    assert response.status_code == 400
    assert "Nothing was saved" in html
    assert "Line 2: the model label LABEL_0 is already mapped in Line 1." in html
    assert "Line 3: sarcastic is not a label of this campaign; one of negative, positive." in html
    assert Campaign.objects.values().get(pk=campaign.pk) == before


def test_k_is_fixed_once_labeling_units_exist(client, researcher, campaign):
    make_unit(make_original(campaign))
    client.force_login(researcher)
    response = client.post(
        f"/campaigns/{campaign.id}/settings/", _settings_post(campaign, judgments_per_candidate=3)
    )
    assert response.status_code == 400
    assert "K cannot change once labeling units exist" in response.content.decode()
    campaign.refresh_from_db()
    assert campaign.judgments_per_candidate == 2


def test_a_generator_list_with_repeats_is_left_to_the_api(client, researcher, campaign):
    repeated = [{"name": "polyjuice", "codes": ["negation"]}, {"name": "polyjuice", "seed": 1}]
    Campaign.objects.filter(pk=campaign.pk).update(generators=repeated)
    campaign.refresh_from_db()
    client.force_login(researcher)
    html = client.get(f"/campaigns/{campaign.id}/settings/").content.decode()
    assert "edit its generators there" in html
    response = client.post(
        f"/campaigns/{campaign.id}/settings/", _settings_post(campaign, lease_minutes=30)
    )
    assert "Saved: lease_minutes." in response.content.decode()
    campaign.refresh_from_db()
    assert campaign.generators == repeated and campaign.lease_minutes == 30


# ----------------------------------------------------------------- generation engine section

ENGINE_FIELDS = {
    "engine": "server",
    "server_url": "http://gpu-box:8000/v1",
    "server_model": "org/m-7b",
    "server_api": "chat",
    "server_api_key_env": "LAB_KEY",
    "server_concurrency": "8",
    "server_timeout": "20",
    "server_retries": "2",
}


def _save(client, campaign, **changes):
    return client.post(
        f"/campaigns/{campaign.id}/settings/",
        _settings_post(campaign, **changes),
        HTTP_HX_REQUEST="true",
    )


def test_the_engine_section_shows_the_site_defaults_and_never_a_key(
    client, researcher, campaign, settings
):
    settings.GENERATION_ENGINE = "loop"
    settings.INFERENCE_SERVER = {**settings.INFERENCE_SERVER, "model": "org/site-model"}
    client.force_login(researcher)
    html = client.get(f"/campaigns/{campaign.id}/settings/").content.decode()
    assert "Generation engine (Polyjuice)" in html
    assert '<option value="" selected>Site default (loop)</option>' in html
    assert 'value="server">server: an OpenAI-compatible inference server' in html
    assert 'placeholder="org/site-model"' in html  # the site's default model
    assert 'name="server_retries"' in html and 'placeholder="3"' in html  # the generator's
    assert "never the key" in html and "it is never stored or shown" in html


def test_saving_the_server_writes_the_polyjuice_entry_after_one_probe(
    client, researcher, campaign, inference_server
):
    client.force_login(researcher)
    response = _save(client, campaign, options_polyjuice='{"codes": ["negation"]}', **ENGINE_FIELDS)
    assert response.status_code == 200, response.content.decode()
    assert "Saved: generators." in response.content.decode()
    campaign.refresh_from_db()
    assert campaign.generators == [
        {
            "name": "polyjuice",
            "codes": ["negation"],
            "engine": "server",
            "server_url": "http://gpu-box:8000/v1",
            "server_model": "org/m-7b",
            "server_api": "chat",
            "server_api_key_env": "LAB_KEY",
            "server_concurrency": 8,
            "server_timeout": 20.0,
            "server_retries": 2,
        }
    ]
    assert len(inference_server.probed) == 1
    html = client.get(f"/campaigns/{campaign.id}/settings/").content.decode()
    assert 'value="http://gpu-box:8000/v1"' in html and 'value="LAB_KEY"' in html
    # The JSON options hold only the other options.
    assert 'value="{&quot;codes&quot;: [&quot;negation&quot;]}"' in html

    unchanged = _save(
        client, campaign, options_polyjuice='{"codes": ["negation"]}', **ENGINE_FIELDS
    )
    assert "Nothing changed." in unchanged.content.decode()
    other = _save(
        client,
        campaign,
        options_polyjuice='{"codes": ["negation"]}',
        lease_minutes=45,
        **ENGINE_FIELDS,
    )
    assert "Saved: lease_minutes." in other.content.decode()
    assert len(inference_server.probed) == 1  # nothing server-related changed


def test_an_in_process_engine_drops_the_servers_fields(
    client, researcher, campaign, inference_server
):
    client.force_login(researcher)
    response = _save(client, campaign, **{**ENGINE_FIELDS, "engine": "loop"})
    assert response.status_code == 200
    campaign.refresh_from_db()
    assert campaign.generators == [{"name": "polyjuice", "engine": "loop"}]
    assert inference_server.probed == []


@pytest.mark.parametrize(
    ("changes", "field", "message"),
    [
        ({"server_url": "gpu-box:8000"}, "server_url", "must start with http://"),
        ({"server_model": ""}, "server_model", "server_model is required"),
        ({"server_concurrency": "0"}, "server_concurrency", "at least 1"),
        ({"server_timeout": "inf"}, "server_timeout", "Enter a number."),
        ({"server_api_key_env": "AWS_SECRET_ACCESS_KEY"}, "server_api_key_env", "allowed: LAB_KEY"),
    ],
)
def test_bad_server_fields_are_shown_at_the_field(
    client, researcher, campaign, inference_server, changes, field, message
):
    client.force_login(researcher)
    response = _save(client, campaign, **{**ENGINE_FIELDS, **changes})
    assert response.status_code == 400
    html = response.content.decode()
    assert message in html and "Nothing was saved" in html
    # The error sits in the field's own block, right after its input.
    block = html.split(f'name="{field}"', 1)[1].split('<div class="field', 1)[0]
    assert message in block, block
    campaign.refresh_from_db()
    assert campaign.generators == [] and inference_server.probed == []


def test_a_refusing_server_is_shown_at_the_url_and_nothing_is_saved(
    client, researcher, campaign, inference_server
):
    inference_server.refusal = (
        "The inference server at http://gpu-box:8000/v1 failed after 1 try: cannot connect "
        "(<Connection refused>)"
    )
    client.force_login(researcher)
    response = _save(client, campaign, **ENGINE_FIELDS)
    assert response.status_code == 400
    html = response.content.decode()
    block = html.split('name="server_url"', 1)[1].split('<div class="field', 1)[0]
    assert "cannot connect (&lt;Connection refused&gt;)" in block  # escaped
    assert "<Connection refused>" not in html
    campaign.refresh_from_db()
    assert campaign.generators == []


def test_engine_options_belong_to_their_section_not_the_json(client, researcher, campaign):
    client.force_login(researcher)
    response = _save(client, campaign, options_polyjuice='{"engine": "server", "seed": 1}')
    assert response.status_code == 400
    assert "Set engine in the Generation engine section." in response.content.decode()


def test_a_campaign_name_that_ends_with_a_period_is_not_followed_by_another(client, researcher):
    client.force_login(researcher)
    response = client.post("/campaigns/new/", {"name": "Pilot v2.", "task_type": "sentiment"})
    assert response.status_code == 302
    page = client.get(response["Location"]).content.decode()
    assert "Created Pilot v2. Upload its dataset" in page and "v2.." not in page
