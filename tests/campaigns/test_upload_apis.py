"""POST /api/campaigns/<id>/originals/upload/: dry runs, imports, mappings and bad files."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from cfannotate.campaigns.models import Original, TaskType
from tests.factories import make_campaign

CSV = b"sentence1,sentence2,gold_label,pairID\nA man sleeps.,A man rests.,entailment,p1\n"


def url(campaign) -> str:
    return f"/api/campaigns/{campaign.id}/originals/upload/"


def file(content: bytes, name: str = "snli.csv") -> SimpleUploadedFile:
    return SimpleUploadedFile(name, content, content_type="text/csv")


@pytest.fixture
def nli(researcher):
    return make_campaign(owner=researcher, task_type=TaskType.NLI, name="NLI")


def test_dry_run_previews_without_importing(api_client, nli):
    content = CSV + b"A dog barks.,A cat sleeps.,maybe,p2\n"
    response = api_client.post(
        url(nli), {"file": file(content), "dry_run": "true"}, format="multipart"
    )
    assert response.status_code == 200
    body = response.json()
    assert body["format"] == "csv" and body["encoding"] == "utf-8" and body["rows"] == 2
    assert body["mapping"] == {
        "id": "pairID",
        "context": "sentence1",
        "text": "sentence2",
        "label": "gold_label",
    }
    assert body["sample"][0] == {
        "sentence1": "A man sleeps.",
        "sentence2": "A man rests.",
        "gold_label": "entailment",
        "pairID": "p1",
    }
    assert body["labels"] == [
        {"spelling": "entailment", "rows": 1, "label": "entailment"},
        {"spelling": "maybe", "rows": 1, "label": None},
    ]
    assert list(body["errors"]) == ["row 3"] and body["error_rows"] == 1
    assert body["importable"] is False and body["imported"] == 0
    assert not Original.objects.exists()


def test_upload_imports_with_a_mapping(api_client, nli):
    content = (
        b"p,h,y\nA man sleeps.,A man rests.,entailment\nA man sleeps.,A man runs.,Contradiction\n"
    )
    mapping = json.dumps({"context": "p", "text": "h", "label": "y"})
    response = api_client.post(
        url(nli), {"file": file(content, "x.csv"), "mapping": mapping}, format="multipart"
    )
    assert response.status_code == 201, response.json()
    assert response.json()["imported"] == 2
    assert list(nli.originals.values_list("label__value", flat=True).order_by("id")) == [
        "entailment",
        "contradiction",
    ]


def test_invalid_rows_are_a_400_listing_them(api_client, nli):
    content = CSV + b",A cat sleeps.,neutral,p1\n"
    response = api_client.post(url(nli), {"file": file(content)}, format="multipart")
    assert response.status_code == 400
    body = response.json()
    assert body["message"] == "1 row(s) are invalid; nothing was imported."
    assert body["fields"] == {
        "row 3": [
            "context ('sentence1'): The premise is empty.",
            "id ('pairID'): The id 'p1' is used twice.",
        ]
    }
    assert not Original.objects.exists()


@pytest.mark.parametrize(
    "mapping, field, problem",
    [
        ("{not json", "mapping", "Value must be valid JSON."),
        ('["text"]', "mapping", 'A JSON object, e.g. {"text": "review"}.'),
        ('{"text": "nope"}', "mapping.text", "The file has no column 'nope'"),
        ('{"label": null}', "mapping.label", "Choose the column that holds the label."),
    ],
)
def test_bad_mappings(api_client, nli, mapping, field, problem):
    response = api_client.post(
        url(nli), {"file": file(CSV), "mapping": mapping}, format="multipart"
    )
    assert response.status_code == 400
    assert problem in response.json()["fields"][field][0]


def test_bad_files(api_client, nli, settings):
    missing = api_client.post(url(nli), {}, format="multipart")
    assert missing.status_code == 400 and "file" in missing.json()["fields"]
    header_only = api_client.post(url(nli), {"file": file(CSV.split(b"\n")[0] + b"\n")})
    assert "header but no rows" in header_only.json()["message"]
    settings.UPLOAD_MAX_BYTES = len(CSV) - 1
    too_large = api_client.post(url(nli), {"file": file(CSV)}, format="multipart")
    assert too_large.status_code == 400
    assert too_large.json()["message"] == (
        f"The file has {len(CSV)} bytes; the limit is {len(CSV) - 1}. Nothing was imported."
    )


def test_only_the_owner_uploads(api_client, other_researcher):
    theirs = make_campaign(owner=other_researcher)
    assert api_client.post(url(theirs), {"file": file(CSV)}).status_code == 404


def test_the_schema_describes_the_upload(api_client):
    schema = api_client.get("/api/schema/", HTTP_ACCEPT="application/json").json()
    operation = schema["paths"]["/api/campaigns/{campaign_id}/originals/upload/"]["post"]
    body = operation["requestBody"]["content"]["multipart/form-data"]["schema"]
    assert body["$ref"].endswith("/OriginalUploadInput")
    assert set(schema["components"]["schemas"]["OriginalUploadInput"]["properties"]) == {
        "file",
        "mapping",
        "dry_run",
    }
    assert {"200", "201", "4XX"} <= set(operation["responses"])
