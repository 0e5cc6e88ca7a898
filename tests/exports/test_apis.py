"""The export API: streamed files for the owner, clear 400s for what it cannot export."""

import csv
import io
import json

import pytest
import yaml
from django.http import StreamingHttpResponse
from rest_framework.test import APIClient

from tests.factories import make_campaign


def url(campaign, kind: str, query: str = "") -> str:
    return f"/api/campaigns/{campaign.id}/exports/{kind}/{query}"


def body(response) -> str:
    return b"".join(response.streaming_content).decode()


def test_the_contrast_set_streams_as_a_jsonl_attachment(api_client, labeled):
    response = api_client.get(url(labeled.campaign, "contrast", "?format=jsonl"))

    assert response.status_code == 200
    assert isinstance(response, StreamingHttpResponse)
    assert response["Content-Type"] == "application/jsonl; charset=utf-8"
    assert response["Content-Disposition"] == (
        f'attachment; filename="{labeled.campaign.slug}-contrast.jsonl"'
    )
    rows = [json.loads(line) for line in body(response).splitlines()]
    expected = [labeled.candidates["a1"].id, labeled.candidates["b1"].id]
    assert [row["candidate_id"] for row in rows] == expected


def test_jsonl_is_the_default_and_csv_is_asked_for_by_format(api_client, labeled):
    default = api_client.get(url(labeled.campaign, "augmentation"))
    assert default["Content-Disposition"].endswith('-augmentation.jsonl"')
    assert len(body(default).splitlines()) == 5

    response = api_client.get(url(labeled.campaign, "augmentation", "?format=csv"))
    assert response.status_code == 200 and isinstance(response, StreamingHttpResponse)
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    rows = list(csv.DictReader(io.StringIO(body(response), newline="")))
    assert [row["is_original"] for row in rows] == ["true", "false", "false", "true", "false"]


def test_judgments_with_gold_on_request(api_client, labeled):
    real = api_client.get(url(labeled.campaign, "judgments"))
    with_gold = api_client.get(url(labeled.campaign, "judgments", "?include_gold=true"))

    assert len(body(real).splitlines()) == 27
    assert len(body(with_gold).splitlines()) == 54  # 18 gold, 9 training
    assert with_gold["Content-Disposition"].endswith('-judgments-with-gold.jsonl"')


@pytest.mark.parametrize(
    ("kind", "query", "message"),
    [
        ("everything", "", "Unknown export 'everything'; choose one of: contrast, augmentation"),
        ("contrast", "?format=xlsx", "Unknown format 'xlsx'; choose one of: jsonl, csv."),
        ("contrast", "?format=json", "Unknown format 'json'"),
        ("contrast", "?include_gold=true", "only be added to the judgments export"),
        ("judgments", "?include_gold=maybe", "Some fields are invalid: include_gold."),
    ],
)
def test_what_cannot_be_exported_is_a_400_that_says_why(api_client, campaign, kind, query, message):
    response = api_client.get(url(campaign, kind, query))

    assert response.status_code == 400
    assert response["Content-Type"] == "application/json"
    assert message in response.json()["message"]


def test_another_researchers_campaign_is_not_found(api_client, other_researcher):
    theirs = make_campaign(owner=other_researcher)

    response = api_client.get(url(theirs, "contrast"))

    assert response.status_code == 404
    assert response.json()["message"] == f"No campaign {theirs.id} among yours."


def test_anonymous_visitors_get_nothing(campaign):
    assert APIClient().get(url(campaign, "contrast")).status_code in (401, 403)


def test_the_export_is_in_the_api_schema(api_client):
    schema = yaml.safe_load(api_client.get("/api/schema/").content)
    operation = schema["paths"]["/api/campaigns/{campaign_id}/exports/{kind}/"]["get"]
    assert {parameter["name"] for parameter in operation["parameters"]} >= {
        "kind",
        "format",
        "include_gold",
    }
    assert set(operation["responses"]["200"]["content"]) == {"application/jsonl", "text/csv"}


def test_the_list_says_what_each_file_holds_now(api_client, labeled, other_researcher):
    campaign = labeled.campaign
    response = api_client.get(f"/api/campaigns/{campaign.id}/exports/")
    assert response.status_code == 200
    listed = response.json()
    assert listed["kept"] == 4 and listed["labels_updated_at"]
    files = {entry["kind"]: entry for entry in listed["files"]}
    assert {kind: entry["rows"] for kind, entry in files.items()} == {
        "contrast": 2,
        "augmentation": 5,
        "judgments": 27,
        "candidates": campaign.candidates.count(),
    }
    # Each entry's url streams that file, with as many rows as it said.
    streamed = api_client.get(files["augmentation"]["url"] + "?format=jsonl")
    assert len(body(streamed).splitlines()) == files["augmentation"]["rows"]

    stranger = APIClient()
    stranger.force_authenticate(other_researcher)
    assert stranger.get(f"/api/campaigns/{campaign.id}/exports/").status_code == 404
