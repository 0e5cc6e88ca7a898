import pytest
from django.core.exceptions import ValidationError

from cfannotate.campaigns import services
from cfannotate.campaigns.models import Campaign, Original, TaskType
from cfannotate.campaigns.services import (
    MAX_TEXT_CHARS,
    CampaignAlreadyCreated,
    campaign_create,
    campaign_update,
    originals_import,
)
from cfannotate.core.exceptions import InvalidInput


def test_nli_template_brings_labels_and_field_names(researcher):
    campaign = campaign_create(owner=researcher, name="SNLI", task_type=TaskType.NLI)
    assert [label.display_name for label in campaign.labels.all()] == [
        "Definitely True",
        "May be True",
        "Definitely False",
    ]
    assert (campaign.context_name, campaign.text_name) == ("Premise", "Hypothesis")
    assert campaign.is_pair_task
    assert "premise" in campaign.instructions.lower()


def test_defaults_follow_the_paper(campaign):
    assert campaign.selected_per_original == 3
    assert (
        campaign.training_rounds,
        campaign.rounds_per_assignment,
        campaign.gold_rounds_per_assignment,
    ) == (1, 20, 2)
    assert campaign.rounds_total == 22
    assert campaign.judgments_per_candidate == 2
    assert campaign.min_median_seconds == 18.0
    assert campaign.min_gold_share == pytest.approx(4 / 6)
    assert campaign.fluency_threshold == 10.0


def test_custom_task_takes_researcher_labels(researcher):
    campaign = campaign_create(
        owner=researcher,
        name="Toxicity",
        task_type=TaskType.CUSTOM,
        labels=[
            {"value": "toxic", "display_name": "Toxic"},
            {"value": "Not Toxic", "description": "Civil language"},
        ],
    )
    assert list(campaign.labels.values_list("value", "display_name")) == [
        ("toxic", "Toxic"),
        ("not_toxic", "Not Toxic"),
    ]


@pytest.mark.parametrize(
    "labels, expected",
    [
        (None, "Give at least two labels"),
        ([{"value": "only"}], "Give at least two labels"),
        ([{"value": "a"}, {"value": "A"}], "distinct"),
        ([{"value": "a"}, {"value": "!!!"}], "Label 2 needs a value"),
    ],
)
def test_custom_task_label_errors(researcher, labels, expected):
    with pytest.raises(InvalidInput) as error:
        campaign_create(owner=researcher, name="X", task_type=TaskType.CUSTOM, labels=labels)
    assert any(expected in message for message in error.value.fields["labels"])


@pytest.mark.parametrize(
    ("label", "expected"),
    [
        ({"value": "v" * 61}, "Label 1's value is longer than 60 characters."),
        (
            {"value": "ok", "display_name": "D" * 81},
            "Label 1's display name is longer than 80 characters.",
        ),
        ({"value": "㎏" * 31}, "Label 1's value is longer than 60 characters."),  # "kg" each
    ],
)
def test_a_label_longer_than_its_column_is_refused(researcher, label, expected):
    with pytest.raises(InvalidInput) as error:
        campaign_create(
            owner=researcher, name="X", task_type=TaskType.CUSTOM, labels=[label, {"value": "b"}]
        )
    assert error.value.fields["labels"] == [expected]
    assert not Campaign.objects.exists()


def test_labels_as_long_as_their_columns_are_kept(researcher):
    campaign = campaign_create(
        owner=researcher,
        name="X",
        task_type=TaskType.CUSTOM,
        labels=[{"value": "v" * 60, "display_name": "D" * 80}, {"value": "b"}],
    )
    assert campaign.labels.first().value == "v" * 60


def test_unknown_task_type_and_setting_are_refused(researcher):
    with pytest.raises(InvalidInput, match="Unknown task type"):
        campaign_create(owner=researcher, name="X", task_type="poetry")
    with pytest.raises(InvalidInput, match="Unknown campaign settings: colour"):
        campaign_create(
            owner=researcher, name="X", task_type="sentiment", settings={"colour": "red"}
        )


def test_out_of_range_settings_are_refused(researcher):
    with pytest.raises(ValidationError):
        campaign_create(
            owner=researcher, name="X", task_type="sentiment", settings={"agreement_threshold": 1.5}
        )


def test_slugs_stay_unique(researcher):
    first = campaign_create(owner=researcher, name="Same name", task_type="sentiment")
    second = campaign_create(owner=researcher, name="Same name", task_type="sentiment")
    assert first.slug == "same-name"
    assert second.slug.startswith("same-name-") and second.slug != first.slug


def test_a_creation_token_makes_one_campaign(researcher, other_researcher):
    first = campaign_create(owner=researcher, name="A", task_type="nli", creation_token="t-1")

    with pytest.raises(CampaignAlreadyCreated) as again:
        campaign_create(owner=researcher, name="B", task_type="sentiment", creation_token="t-1")

    assert again.value.campaign == first and again.value.status_code == 409
    assert again.value.message == "This form already created A."
    assert campaign_create(owner=other_researcher, name="C", task_type="nli", creation_token="t-1")
    untokened = [campaign_create(owner=researcher, name="D", task_type="nli") for _ in range(2)]
    assert untokened[0] != untokened[1]


def test_a_form_sent_twice_at_once_makes_one_campaign(researcher, monkeypatch):
    """Both requests pass the first look (neither sees the other's campaign yet): the
    database's constraint refuses the second, which then answers with the first."""
    first = campaign_create(owner=researcher, name="A", task_type="nli", creation_token="t-1")
    real_check = services._raise_if_created
    looks = []

    def first_look_misses(owner, creation_token):
        looks.append(creation_token)
        if len(looks) > 1:
            real_check(owner, creation_token)

    monkeypatch.setattr(services, "_raise_if_created", first_look_misses)
    with pytest.raises(CampaignAlreadyCreated) as again:
        campaign_create(owner=researcher, name="A", task_type="nli", creation_token="t-1")

    assert again.value.campaign == first and looks == ["t-1", "t-1"]
    assert Campaign.objects.count() == 1


def test_import_accepts_values_display_names_and_aliases(campaign):
    imported = originals_import(
        campaign=campaign,
        records=[
            {"id": "a", "text": "Great film.", "label": "positive"},
            {"id": "b", "text": "Awful film.", "label": "Negative"},
            {"text": "Fine film.", "label": 1, "source": "imdb"},
        ],
    )
    assert imported == 3
    rows = list(Original.objects.filter(campaign=campaign).order_by("id"))
    assert [row.label.value for row in rows] == ["positive", "negative", "positive"]
    assert rows[2].external_id == "row-3"
    assert rows[2].extra == {"source": "imdb"}


def test_import_keeps_what_each_field_was_given(campaign):
    """An id of 0 was replaced by row-N, `true` stored as the text "True", and a single-text
    campaign's "context" key stored as a context its pages never show."""
    originals_import(
        campaign=campaign,
        records=[
            {"id": 0, "text": "Great film.", "label": "positive", "context": "From IMDb."},
            {"id": "", "text": "Awful film.", "label": "negative"},
        ],
    )
    first, second = Original.objects.filter(campaign=campaign).order_by("id")
    assert (first.external_id, first.context, first.extra) == ("0", "", {"context": "From IMDb."})
    assert second.external_id == "row-2"
    with pytest.raises(InvalidInput) as error:
        originals_import(
            campaign=campaign,
            records=[
                {"id": False, "text": "Fine.", "label": "positive"},
                {"id": "t", "text": True, "label": "positive"},
            ],
        )
    assert error.value.fields == {
        "row 1": ["id: Must be text or a number, not true or false."],
        "row 2": ["text: Must be text or a number, not true or false."],
    }


def test_a_pair_tasks_context_is_its_own_field(researcher):
    campaign = campaign_create(owner=researcher, name="NLI", task_type=TaskType.NLI)
    originals_import(
        campaign=campaign,
        records=[
            {
                "id": "p",
                "text": "A dog runs.",
                "context": "A dog is running.",
                "label": "entailment",
            }
        ],
    )
    original = Original.objects.get(campaign=campaign)
    assert (original.context, original.extra) == ("A dog is running.", {})


def test_import_reports_every_bad_row_and_imports_nothing(campaign):
    with pytest.raises(InvalidInput) as error:
        originals_import(
            campaign=campaign,
            records=[
                {"id": "ok", "text": "Good.", "label": "positive"},
                {"id": "empty", "text": "   ", "label": "positive"},
                {"id": "badlabel", "text": "Hmm.", "label": "neutral"},
                {"id": "huge", "text": "x" * (MAX_TEXT_CHARS + 1), "label": "negative"},
                {"id": "ok", "text": "Duplicate id.", "label": "negative"},
            ],
        )
    assert error.value.message == "4 rows are invalid; nothing was imported."
    fields = error.value.fields
    assert fields["row 2"] == ["text: The text is empty."]
    assert "Unknown label 'neutral'" in fields["row 3"][0]
    assert "limit is" in fields["row 4"][0]
    assert "used twice" in fields["row 5"][0]
    assert not Original.objects.filter(campaign=campaign).exists()


def test_import_requires_context_for_pair_tasks(researcher):
    campaign = campaign_create(owner=researcher, name="NLI", task_type=TaskType.NLI)
    with pytest.raises(InvalidInput) as error:
        originals_import(
            campaign=campaign, records=[{"text": "A man sleeps.", "label": "entailment"}]
        )
    assert error.value.fields == {"row 1": ["context: The premise is empty."]}


def test_import_of_nothing_is_an_error(campaign):
    with pytest.raises(InvalidInput, match="no rows"):
        originals_import(campaign=campaign, records=[])


def test_import_refuses_ids_already_in_the_campaign(campaign):
    originals_import(campaign=campaign, records=[{"id": "a", "text": "One.", "label": "positive"}])
    with pytest.raises(InvalidInput):
        originals_import(
            campaign=campaign, records=[{"id": "a", "text": "Two.", "label": "positive"}]
        )
    assert campaign.originals.count() == 1


def test_generator_entries_are_checked_when_a_campaign_is_created(researcher):
    with pytest.raises(InvalidInput) as error:
        campaign_create(
            owner=researcher,
            name="X",
            task_type="sentiment",
            settings={
                "generators": [
                    {"name": "polyjuice"},
                    {"name": "lexicon-remove", "classifier": "bert"},
                    {"name": "causal-negation", "target_label": "negative", "source_labels": []},
                    {"name": "gpt-magic"},
                ]
            },
        )
    assert set(error.value.fields) == {"generators[1].classifier", "generators[3].name"}
    assert not Campaign.objects.exists()
    # A causal campaign has the labels causal-negation converts by default.
    campaign = campaign_create(
        owner=researcher,
        name="Y",
        task_type=TaskType.CAUSAL_STRENGTH,
        settings={"generators": [{"name": "causal-negation"}, {"name": "causal-strengthen"}]},
    )
    assert [entry["name"] for entry in campaign.generators] == [
        "causal-negation",
        "causal-strengthen",
    ]


def test_a_template_brings_the_generators_written_for_its_labels(researcher):
    """Causal strength starts with seed 002's rules next to Polyjuice; the other templates
    and a causal campaign with labels of its own start with the site default."""
    causal = campaign_create(owner=researcher, name="C", task_type=TaskType.CAUSAL_STRENGTH)
    assert causal.generators == [
        {"name": "polyjuice"},
        {"name": "causal-negation"},
        {"name": "causal-strengthen"},
    ]
    assert causal.generator_names == ["polyjuice", "causal-negation", "causal-strengthen"]
    sentiment = campaign_create(owner=researcher, name="S", task_type=TaskType.SENTIMENT)
    assert sentiment.generators == [] and sentiment.generator_names == ["polyjuice"]
    own_labels = campaign_create(
        owner=researcher,
        name="O",
        task_type=TaskType.CAUSAL_STRENGTH,
        labels=[{"value": "c0"}, {"value": "c1"}],
    )
    assert own_labels.generators == []


def test_update_changes_only_the_given_settings_and_checks_generators(campaign):
    updated = campaign_update(
        campaign=campaign,
        settings={"generators": [{"name": "lexicon-replace", "max_candidates": 2}]},
    )
    assert updated.generators == [{"name": "lexicon-replace", "max_candidates": 2}]
    assert updated.judgments_per_candidate == campaign.judgments_per_candidate
    with pytest.raises(InvalidInput) as error:
        campaign_update(
            campaign=campaign,
            settings={"generators": [{"name": "polyjuice", "per_prompt": "three"}]},
        )
    assert "whole number" in error.value.fields["generators[0].per_prompt"][0]
    with pytest.raises(InvalidInput, match="Unknown campaign settings: colour"):
        campaign_update(campaign=campaign, settings={"colour": "red"})
    with pytest.raises(ValidationError):
        campaign_update(campaign=campaign, settings={"lease_minutes": 0})
    campaign.refresh_from_db()
    assert campaign.generators == [{"name": "lexicon-replace", "max_candidates": 2}]
    assert campaign.lease_minutes != 0


# ------------------------------------------------- inference server: probed when it changes

SERVER = {
    "name": "polyjuice",
    "engine": "server",
    "server_url": "http://gpu-box:8000/v1",
    "server_model": "org/m-7b",
}


def test_a_new_server_is_probed_once_on_create_and_on_update(researcher, inference_server):
    campaign = campaign_create(
        owner=researcher,
        name="Served",
        task_type=TaskType.SENTIMENT,
        settings={"generators": [SERVER, {**SERVER, "codes": ["negation"]}]},
    )
    # Two entries, one server: one request.
    assert [(c.base_url, c.model) for c in inference_server.probed] == [
        ("http://gpu-box:8000/v1", "org/m-7b")
    ]
    campaign_update(campaign=campaign, settings={"fluency_threshold": 5.0})
    campaign_update(campaign=campaign, settings={"generators": [{**SERVER, "seed": 7}]})
    assert len(inference_server.probed) == 1  # nothing server-related changed
    campaign_update(campaign=campaign, settings={"generators": [{**SERVER, "server_timeout": 5}]})
    assert len(inference_server.probed) == 2 and inference_server.probed[-1].timeout == 5
    campaign_update(campaign=campaign, settings={"generators": [{"name": "polyjuice"}]})
    assert len(inference_server.probed) == 2  # in process: no server to ask


@pytest.mark.parametrize(
    ("refusal", "field"),
    [
        (
            "The inference server at http://gpu-box:8000/v1 failed after 1 try: cannot connect "
            "(Connection refused)",
            "generators[0].server_url",
        ),
        (
            "The inference server at http://gpu-box:8000/v1 does not serve the model "
            "'org/m-7b'; it serves: org/other.",
            "generators[0].server_model",
        ),
    ],
)
def test_a_server_that_refuses_is_named_and_nothing_is_saved(
    campaign, inference_server, refusal, field
):
    inference_server.refusal = refusal
    with pytest.raises(InvalidInput) as caught:
        campaign_update(campaign=campaign, settings={"generators": [SERVER], "lease_minutes": 9})
    assert caught.value.fields == {field: [refusal]}
    assert refusal in caught.value.message
    campaign.refresh_from_db()
    assert campaign.generators == [] and campaign.lease_minutes != 9
    with pytest.raises(InvalidInput):
        campaign_create(
            owner=campaign.owner,
            name="Refused",
            task_type=TaskType.SENTIMENT,
            settings={"generators": [SERVER]},
        )
    assert not Campaign.objects.filter(name="Refused").exists()


def test_settings_that_fail_their_checks_are_not_probed(campaign, inference_server):
    with pytest.raises(InvalidInput) as caught:
        campaign_update(
            campaign=campaign, settings={"generators": [{**SERVER, "server_url": "gpu-box"}]}
        )
    assert set(caught.value.fields) == {"generators[0].server_url"}
    assert inference_server.probed == []
