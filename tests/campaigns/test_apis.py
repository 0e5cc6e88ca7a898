import pytest
from django.db import DatabaseError
from rest_framework.test import APIClient

from cfannotate.campaigns.generator_settings import generator_entries
from cfannotate.campaigns.label_map import label_map_entries_check
from cfannotate.campaigns.models import Campaign, CampaignLabel
from cfannotate.campaigns.services import label_lookup
from tests.factories import make_campaign, make_original, make_unit


def test_list_shows_only_my_campaigns(api_client, researcher, other_researcher):
    mine = make_campaign(owner=researcher, name="Mine")
    make_campaign(owner=other_researcher, name="Theirs")
    body = api_client.get("/api/campaigns/").json()
    assert body["count"] == 1
    assert body["results"][0]["id"] == mine.id
    assert [label["value"] for label in body["results"][0]["labels"]] == ["negative", "positive"]


def test_others_campaigns_are_not_found(api_client, other_researcher):
    theirs = make_campaign(owner=other_researcher)
    assert api_client.get(f"/api/campaigns/{theirs.id}/").status_code == 404
    assert api_client.get(f"/api/campaigns/{theirs.id}/originals/").status_code == 404
    response = api_client.post(
        f"/api/campaigns/{theirs.id}/originals/import/",
        {"records": [{"text": "x", "label": "positive"}]},
        format="json",
    )
    assert response.status_code == 404
    assert theirs.originals.count() == 0


def test_create_with_settings(api_client):
    response = api_client.post(
        "/api/campaigns/create/",
        {
            "name": "QQP",
            "task_type": "duplicate_questions",
            "settings": {"rounds_per_assignment": 10, "judgments_per_candidate": 3},
        },
        format="json",
    )
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["context_name"] == "Question 1"
    assert (body["rounds_per_assignment"], body["judgments_per_candidate"]) == (10, 3)


def test_create_rejects_bad_settings_with_field_errors(api_client):
    response = api_client.post(
        "/api/campaigns/create/",
        {
            "name": "X",
            "task_type": "sentiment",
            "settings": {"lease_minutes": 0},
        },
        format="json",
    )
    assert response.status_code == 400
    assert "lease_minutes" in str(response.json())
    response = api_client.post(
        "/api/campaigns/create/", {"name": "X", "task_type": "nonsense"}, format="json"
    )
    assert response.status_code == 400
    assert "task_type" in response.json()["fields"]


def test_import_and_list_originals(api_client, campaign):
    response = api_client.post(
        f"/api/campaigns/{campaign.id}/originals/import/",
        {
            "records": [
                {"id": "r1", "text": "A joy.", "label": "positive"},
                {"id": "r2", "text": "A bore.", "label": "negative"},
            ]
        },
        format="json",
    )
    assert response.status_code == 201
    assert response.json() == {"imported": 2}
    listing = api_client.get(f"/api/campaigns/{campaign.id}/originals/").json()
    assert [row["external_id"] for row in listing["results"]] == ["r1", "r2"]
    assert listing["results"][1]["label"] == "negative"


def test_import_errors_are_per_row(api_client, campaign):
    response = api_client.post(
        f"/api/campaigns/{campaign.id}/originals/import/",
        {"records": [{"text": "Fine.", "label": "positive"}, {"text": "", "label": "meh"}]},
        format="json",
    )
    assert response.status_code == 400
    body = response.json()
    assert body["message"] == "1 row is invalid; nothing was imported."
    assert len(body["fields"]["row 2"]) == 2
    assert campaign.originals.count() == 0


def test_originals_are_paginated(api_client, campaign):
    for _ in range(55):
        make_original(campaign)
    first = api_client.get(f"/api/campaigns/{campaign.id}/originals/").json()
    assert first["count"] == 55 and len(first["results"]) == 50 and first["next"]


def test_session_api_writes_need_csrf(researcher):
    client = APIClient(enforce_csrf_checks=True)
    client.login(username=researcher.username, password="pw-for-tests")
    response = client.post(
        "/api/campaigns/create/", {"name": "X", "task_type": "sentiment"}, format="json"
    )
    assert response.status_code == 403
    assert "CSRF" in response.json()["message"]


def test_create_refuses_a_label_value_its_column_cannot_hold(api_client):
    """60 characters pass the serializer, but "㎏" spells "kg" in a value: 120 characters
    where the column holds 60 (PostgreSQL would fail the insert with a 500)."""
    response = api_client.post(
        "/api/campaigns/create/",
        {
            "name": "Units",
            "task_type": "custom",
            "labels": [{"value": "㎏" * 60, "display_name": "Weight"}, {"value": "other"}],
        },
        format="json",
    )
    assert response.status_code == 400
    assert response.json()["fields"]["labels"] == ["Label 1's value is longer than 60 characters."]
    assert not Campaign.objects.exists()


def test_create_and_update_name_the_bad_generator_option(api_client, other_researcher):
    response = api_client.post(
        "/api/campaigns/create/",
        {
            "name": "Two generators",
            "task_type": "sentiment",
            "settings": {
                "generators": [{"name": "polyjuice"}, {"name": "lexicon-remove", "colour": 1}]
            },
        },
        format="json",
    )
    assert response.status_code == 400
    assert set(response.json()["fields"]) == {"generators[1].colour"}
    created = api_client.post(
        "/api/campaigns/create/",
        {
            "name": "Two generators",
            "task_type": "sentiment",
            "settings": {"generators": [{"name": "polyjuice"}, {"name": "lexicon-remove"}]},
        },
        format="json",
    )
    assert created.status_code == 201
    url = f"/api/campaigns/{created.json()['id']}/update/"
    bad = api_client.patch(
        url,
        {"settings": {"generators": [{"name": "concept-steered", "beam_size": 0}]}},
        format="json",
    )
    assert bad.status_code == 400 and "generators[0].beam_size" in bad.json()["fields"]
    no_run_could = api_client.patch(
        url,
        {"settings": {"generators": [{"name": "polyjuice", "strategy": "zzz", "seed": 2**70}]}},
        format="json",
    )
    assert no_run_could.status_code == 400
    assert set(no_run_could.json()["fields"]) == {
        "generators[0].strategy",
        "generators[0].seed",
    }
    good = api_client.patch(url, {"settings": {"generators": []}}, format="json")
    assert good.status_code == 200 and good.json()["generators"] == []
    theirs = make_campaign(owner=other_researcher)
    refused = api_client.patch(
        f"/api/campaigns/{theirs.id}/update/", {"settings": {"generators": []}}, format="json"
    )
    assert refused.status_code == 404


# The settings page sends targeting through the same validator (test_forms_and_pages).
@pytest.mark.parametrize(
    ("targeting", "field", "message"),
    [
        ({"code": "lexical"}, "targeting.code", "Choose the slices this control code targets."),
        ({"slices": ["preposition"], "code": "teleport"}, "targeting.code", "unknown control"),
        ({"slices": ["nowhere"]}, "targeting.slices", "Invalid targeting"),
        ({"slices": ["preposition"], "codes": "lexical"}, "targeting.codes", "Not a targeting"),
    ],
)
def test_update_refuses_targeting_it_would_not_use(api_client, campaign, targeting, field, message):
    before = Campaign.objects.values().get(pk=campaign.pk)
    response = api_client.patch(
        f"/api/campaigns/{campaign.id}/update/",
        {"settings": {"targeting": targeting}},
        format="json",
    )
    assert response.status_code == 400
    assert message in " ".join(response.json()["fields"][field])
    assert Campaign.objects.values().get(pk=campaign.pk) == before


def test_update_keeps_a_targeted_code_with_its_slices(api_client, campaign):
    targeting = {"slices": ["preposition"], "code": "lexical"}
    response = api_client.patch(
        f"/api/campaigns/{campaign.id}/update/",
        {"settings": {"targeting": targeting}},
        format="json",
    )
    assert response.status_code == 200
    campaign.refresh_from_db()
    assert campaign.targeting == targeting
    (entry,) = generator_entries(campaign)
    assert entry.options["slices"] == ["preposition"] and entry.options["slice_code"] == "lexical"


# Infinity and NaN: JSON reads 1e999 as infinity, and a numeric field reads "NaN" or "inf".
NON_FINITE = [
    ('{"fluency_threshold": 1e999}', "fluency_threshold"),
    ('{"weight_tree": -1e999}', "weight_tree"),
    ('{"agreement_threshold": "NaN"}', "agreement_threshold"),
    ('{"lease_minutes": 1e999}', "lease_minutes"),
    ('{"min_median_seconds": "inf"}', "min_median_seconds"),
    ('{"bonus_amount": "-Infinity"}', "bonus_amount"),
    ('{"generators": [{"name": "polyjuice", "temperature": 1e999}]}', "generators[0].temperature"),
]


@pytest.mark.parametrize(("settings", "field"), NON_FINITE)
def test_create_refuses_non_finite_numbers_and_a_retry_makes_one_campaign(
    api_client, settings, field
):
    body = f'{{"name": "Probe", "task_type": "sentiment", "settings": {settings}}}'
    response = api_client.post("/api/campaigns/create/", body, content_type="application/json")
    assert response.status_code == 400
    assert response.json() == {
        "message": f"Numbers must be finite: {field}.",
        "fields": {field: ["Must be a finite number, not infinity or NaN."]},
    }
    assert not Campaign.objects.exists()

    retry = api_client.post(
        "/api/campaigns/create/", {"name": "Probe", "task_type": "sentiment"}, format="json"
    )
    assert retry.status_code == 201
    assert Campaign.objects.count() == 1


@pytest.mark.parametrize(("settings", "field"), NON_FINITE)
def test_update_refuses_non_finite_numbers_and_keeps_the_settings(
    api_client, campaign, settings, field
):
    before = Campaign.objects.values().get(pk=campaign.pk)
    response = api_client.patch(
        f"/api/campaigns/{campaign.id}/update/",
        f'{{"settings": {settings}}}',
        content_type="application/json",
    )
    assert response.status_code == 400
    assert list(response.json()["fields"]) == [field]
    assert Campaign.objects.values().get(pk=campaign.pk) == before
    assert api_client.get(f"/api/campaigns/{campaign.id}/").status_code == 200


@pytest.mark.parametrize(
    ("settings", "problem"),
    [
        ({"flip_model": None}, "Give a value; null is not one."),
        ({"generators": None}, "Give a value; null is not one."),
        ({"targeting": None}, "Give a value; null is not one."),
        ({"lease_minutes": 1.5}, "Give a whole number."),
        ({"judgments_per_candidate": "2.7"}, "Give a whole number."),
        ({"lease_minutes": True}, "Give a number, not true or false."),
        ({"weight_base": "heavy"}, "Give a number in digits, e.g. 12 or 0.5."),
        ({"lease_minutes": "1_000"}, "Give a number in digits, e.g. 12 or 0.5."),
        ({"weight_base": "\u0661"}, "Give a number in digits, e.g. 12 or 0.5."),
        ({"lease_minutes": 10**12}, "Ensure this value is less than or equal to 43200."),
        ({"max_requeues": 10**6}, "Ensure this value is less than or equal to 20."),
        ({"weight_tree": 1e300}, "Ensure this value is less than or equal to 100.0."),
    ],
)
def test_update_refuses_values_a_field_would_store_otherwise(
    api_client, campaign, settings, problem
):
    """null reached the database as NOT NULL failures (500); 1.5 was cut to 1 and true read
    as 1; a lease of 10**12 minutes passed and broke every worker's join (date overflow)."""
    before = Campaign.objects.values().get(pk=campaign.pk)
    response = api_client.patch(
        f"/api/campaigns/{campaign.id}/update/", {"settings": settings}, format="json"
    )
    assert response.status_code == 400
    (name,) = settings
    assert response.json()["fields"] == {name: [problem]}
    assert Campaign.objects.values().get(pk=campaign.pk) == before


def test_numbers_as_text_are_read_as_numbers_and_k_compares_by_value(api_client, campaign):
    make_unit(make_original(campaign))
    url = f"/api/campaigns/{campaign.id}/update/"
    same_k = api_client.patch(
        url, {"settings": {"judgments_per_candidate": "2", "lease_minutes": "120"}}, format="json"
    )
    assert same_k.status_code == 200, same_k.json()
    campaign.refresh_from_db()
    assert (campaign.judgments_per_candidate, campaign.lease_minutes) == (2, 120)
    other_k = api_client.patch(url, {"settings": {"judgments_per_candidate": 3}}, format="json")
    assert other_k.status_code == 400
    assert other_k.json()["fields"] == {
        "judgments_per_candidate": ["Fixed once labeling units exist."]
    }


def test_the_json_constants_nan_and_infinity_are_refused(api_client, campaign):
    for constant in ("NaN", "Infinity", "-Infinity"):
        response = api_client.patch(
            f"/api/campaigns/{campaign.id}/update/",
            f'{{"settings": {{"weight_base": {constant}}}}}',
            content_type="application/json",
        )
        assert response.status_code == 400
        assert response.json()["message"].startswith(
            f"JSON parse error - {constant} is not a JSON number"
        )


def test_labels_shown_under_one_name_are_refused(api_client):
    response = api_client.post(
        "/api/campaigns/create/",
        {
            "name": "Probe",
            "task_type": "custom",
            "labels": [
                {"value": "a", "display_name": "Same"},
                {"value": "b", "display_name": "Same"},
            ],
        },
        format="json",
    )
    assert response.status_code == 400
    assert response.json()["fields"] == {"labels": ["Label display names must be distinct."]}
    assert not Campaign.objects.exists()


@pytest.mark.parametrize(
    ("labels", "spelled"),
    [
        ([{"value": "yes", "display_name": "No"}, {"value": "no", "display_name": "Yes"}], "no"),
        ([{"value": "a", "display_name": "X"}, {"value": "b", "display_name": "x"}], "x"),
    ],
)
def test_labels_a_file_could_not_tell_apart_are_refused(api_client, labels, spelled):
    """A file's label is read by value or display name in any case: "yes" shown as "No"
    beside "no" shown as "Yes" would store the other label."""
    response = api_client.post(
        "/api/campaigns/create/",
        {"name": "Swap", "task_type": "custom", "labels": labels},
        format="json",
    )
    assert response.status_code == 400
    (problem, *_) = response.json()["fields"]["labels"]
    assert problem == (
        f"Labels 1 and 2 are both spelled {spelled!r} (a value or a display name, in any "
        "case): a file's labels could not tell them apart."
    )
    assert not Campaign.objects.exists()


def test_a_label_set_saved_before_the_check_reads_values_as_values(researcher):
    campaign = make_campaign(
        owner=researcher,
        task_type="custom",
        labels=[{"value": "yes", "display_name": "Agree"}, {"value": "no", "display_name": "Nay"}],
    )
    CampaignLabel.objects.filter(campaign=campaign, value="yes").update(display_name="No")
    lookup = label_lookup(campaign)
    assert (lookup["no"].value, lookup["yes"].value, lookup["nay"].value) == ("no", "yes", "no")
    mapping, problems = label_map_entries_check(
        [("line 1", "LABEL_0", "no")], labels=[("yes", "No"), ("no", "Nay")]
    )
    assert (mapping, problems) == ({"LABEL_0": "no"}, [])


def test_a_failed_create_leaves_nothing_behind(api_client, monkeypatch):
    """Campaign and labels are one transaction: a failure after the campaign row is written
    takes the row with it, so the client's retry does not make a second campaign."""

    def labels_fail(*args, **kwargs):
        raise DatabaseError("the disk is full")

    monkeypatch.setattr(CampaignLabel.objects, "bulk_create", labels_fail)
    api_client.raise_request_exception = False
    failed = api_client.post(
        "/api/campaigns/create/", {"name": "Probe", "task_type": "sentiment"}, format="json"
    )
    assert failed.status_code == 500
    assert not Campaign.objects.exists()

    monkeypatch.undo()
    retry = api_client.post(
        "/api/campaigns/create/", {"name": "Probe", "task_type": "sentiment"}, format="json"
    )
    assert retry.status_code == 201
    assert Campaign.objects.count() == 1 and CampaignLabel.objects.count() == 2


# ----------------------------------------------------------------- inference-server options

SERVER = {
    "name": "polyjuice",
    "engine": "server",
    "server_url": "http://gpu-box:8000/v1",
    "server_model": "org/m-7b",
    "server_api_key_env": "LAB_KEY",
}


def _create(api_client, generators):
    return api_client.post(
        "/api/campaigns/create/",
        {"name": "Served", "task_type": "sentiment", "settings": {"generators": generators}},
        format="json",
    )


def test_the_api_takes_server_options_inside_the_polyjuice_entry(api_client, inference_server):
    created = _create(api_client, [{**SERVER, "server_concurrency": 4, "server_retries": 0}])
    assert created.status_code == 201, created.json()
    assert created.json()["generators"] == [
        {**SERVER, "server_concurrency": 4, "server_retries": 0}
    ]
    assert len(inference_server.probed) == 1
    url = f"/api/campaigns/{created.json()['id']}/update/"
    updated = api_client.patch(url, {"settings": {"fluency_threshold": 4}}, format="json")
    assert updated.status_code == 200
    assert len(inference_server.probed) == 1  # no server option changed: no request


@pytest.mark.parametrize(
    ("entry", "field"),
    [
        ({**SERVER, "server_colour": "red"}, "generators[0].server_colour"),
        ({**SERVER, "server_url": "gpu-box:8000"}, "generators[0].server_url"),
        ({**SERVER, "server_timeout": "soon"}, "generators[0].server_timeout"),
        ({**SERVER, "engine": "vllm"}, "generators[0].engine"),
        (
            {**SERVER, "server_api_key_env": "CFANNOTATE_SECRET_KEY"},
            "generators[0].server_api_key_env",
        ),
    ],
)
def test_bad_server_options_are_a_400_naming_the_field(api_client, inference_server, entry, field):
    response = _create(api_client, [entry])
    assert response.status_code == 400
    assert set(response.json()["fields"]) == {field}
    assert not Campaign.objects.exists() and inference_server.probed == []


def test_a_refusing_server_is_a_400_with_its_message_and_nothing_changes(
    api_client, campaign, inference_server
):
    inference_server.refusal = (
        "The inference server at http://gpu-box:8000/v1 does not serve the model 'org/m-7b'; "
        "it serves: org/other."
    )
    response = api_client.patch(
        f"/api/campaigns/{campaign.id}/update/",
        {"settings": {"generators": [SERVER], "lease_minutes": 9}},
        format="json",
    )
    assert response.status_code == 400
    assert response.json()["fields"] == {"generators[0].server_model": [inference_server.refusal]}
    assert "it serves: org/other." in response.json()["message"]
    campaign.refresh_from_db()
    assert campaign.generators == [] and campaign.lease_minutes != 9
    assert _create(api_client, [SERVER]).status_code == 400
    assert not Campaign.objects.filter(name="Served").exists()


def test_the_api_key_itself_is_never_stored_or_shown(
    api_client, client, researcher, inference_server, monkeypatch
):
    from io import StringIO

    from django.core.management import call_command

    from tests.factories import make_candidate

    secret = "sk-lab-0123456789-never-shown"
    monkeypatch.setenv("LAB_KEY", secret)
    keys_seen = []
    probe = inference_server.probe
    monkeypatch.setattr(
        "generation.engines.server.probe",
        lambda config: keys_seen.append(config.api_key()) or probe(config),
    )
    created = _create(api_client, [SERVER])
    assert created.status_code == 201
    assert keys_seen == [secret]  # the probe had the key, from the environment
    campaign = Campaign.objects.get(pk=created.json()["id"])
    original = make_original(campaign)
    make_candidate(original, metadata={"engine": "server", "model": "org/m-7b"})
    client.force_login(researcher)
    seen = [
        created.content,
        api_client.get(f"/api/campaigns/{campaign.id}/").content,
        api_client.get("/api/campaigns/").content,
        api_client.patch(
            f"/api/campaigns/{campaign.id}/update/",
            {"settings": {"generators": [{**SERVER, "server_timeout": 9}]}},
            format="json",
        ).content,
        api_client.get(f"/api/campaigns/{campaign.id}/candidates/").content,
        client.get(f"/campaigns/{campaign.id}/").content,
        client.get(f"/campaigns/{campaign.id}/settings/").content,
        client.get(f"/campaigns/{campaign.id}/candidates/").content,
    ]
    dump = StringIO()
    call_command("dumpdata", stdout=dump)
    assert b"LAB_KEY" in seen[0] and b"org/m-7b" in seen[4]  # the name, not the key
    for content in [*seen, dump.getvalue().encode()]:
        assert secret.encode() not in content


def test_the_real_probe_refuses_a_wrong_url_or_model_and_sends_the_key(
    api_client, settings, monkeypatch
):
    """One end-to-end check through `generation.engines.server.probe` and a loopback stub."""
    from tests.generation.server_fixtures import Reply, StubServer, free_port

    secret = "sk-lab-0123456789-real-probe"
    monkeypatch.setenv("LAB_KEY", secret)
    settings.INFERENCE_SERVER_API_KEY_ENVS = ["LAB_KEY"]
    models = {"object": "list", "data": [{"id": "org/m-7b", "owned_by": "vllm"}]}
    with StubServer(lambda received: Reply(body=models)) as server:
        wrong_model = _create(
            api_client, [{**SERVER, "server_url": server.url, "server_model": "org/typo"}]
        )
        assert wrong_model.status_code == 400
        (message,) = wrong_model.json()["fields"]["generators[0].server_model"]
        assert "does not serve the model 'org/typo'; it serves: org/m-7b." in message
        created = _create(api_client, [{**SERVER, "server_url": server.url}])
        assert created.status_code == 201
        assert [r.headers["authorization"] for r in server.received] == [f"Bearer {secret}"] * 2
    unreachable = _create(
        api_client, [{**SERVER, "server_url": f"http://127.0.0.1:{free_port()}/v1"}]
    )
    assert unreachable.status_code == 400
    assert "cannot connect" in unreachable.json()["fields"]["generators[0].server_url"][0]
    for response in (wrong_model, created, unreachable):
        assert secret not in response.content.decode()
    assert Campaign.objects.count() == 1
