from rest_framework.test import APIClient

from tests.factories import make_campaign, make_original


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
    assert body["message"] == "1 row(s) are invalid; nothing was imported."
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
    good = api_client.patch(url, {"settings": {"generators": []}}, format="json")
    assert good.status_code == 200 and good.json()["generators"] == []
    theirs = make_campaign(owner=other_researcher)
    refused = api_client.patch(
        f"/api/campaigns/{theirs.id}/update/", {"settings": {"generators": []}}, format="json"
    )
    assert refused.status_code == 404
