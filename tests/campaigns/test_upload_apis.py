"""POST /api/campaigns/<id>/originals/upload/: dry runs, imports, mappings and bad files."""

import codecs
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


def test_a_dry_run_counts_the_rows_already_in_the_campaign(api_client, nli):
    imported = api_client.post(url(nli), {"file": file(CSV)}, format="multipart")
    assert imported.status_code == 201 and imported.json()["same_text_rows"] == 0
    content = CSV.replace(b"p1", b"p2") + b"A dog barks.,A cat sleeps.,neutral,p3\n"

    again = api_client.post(
        url(nli), {"file": file(content), "dry_run": "true"}, format="multipart"
    )

    assert again.status_code == 200
    assert again.json()["same_text_rows"] == 1 and again.json()["importable"]
    assert Original.objects.count() == 1


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
    assert body["message"] == "1 row is invalid; nothing was imported."
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


@pytest.mark.parametrize("dry_run", ["true", "false"])
def test_a_file_wider_than_the_cap_is_a_400_naming_both_numbers(api_client, nli, dry_run):
    header = ",".join(f"c{number}" for number in range(201))
    content = f"{header}\n{'x,' * 200}x\n".encode()
    response = api_client.post(
        url(nli), {"file": file(content), "dry_run": dry_run}, format="multipart"
    )
    assert response.status_code == 400
    assert response.json() == {
        "message": "The file has 201 columns; the limit is 200. Keep only the columns the "
        "campaign needs (the text, its label, an id and a few others) and upload it again; "
        "nothing was imported.",
        "fields": {"columns": ["201 columns; at most 200."]},
    }
    assert not Original.objects.exists()


def test_a_jsonl_file_with_too_many_keys_is_refused_too(api_client, nli):
    record = {"sentence1": "A man sleeps.", "sentence2": "A man rests.", "gold_label": "entailment"}
    lines = [json.dumps(record), json.dumps({f"k{number}": 1 for number in range(198)})]
    response = api_client.post(url(nli), {"file": file("\n".join(lines).encode(), "snli.jsonl")})
    assert response.status_code == 400
    assert response.json()["message"].startswith(
        "The file has 201 keys by line 2; the limit is 200."
    )
    assert not Original.objects.exists()


LATIN1 = "sentence1,sentence2,gold_label\nUn homme dort.,Il se repose à peine.,neutral\n"


@pytest.mark.parametrize("dry_run", ["true", "false"])
def test_a_latin1_file_is_a_400_naming_the_byte_its_line_and_the_fix(api_client, nli, dry_run):
    response = api_client.post(
        url(nli), {"file": file(LATIN1.encode("latin-1")), "dry_run": dry_run}, format="multipart"
    )
    assert response.status_code == 400
    body = response.json()
    assert body["message"] == (
        "The file is not UTF-8 text: line 2 has the byte 0xE0 ('à' in Windows-1252 or Latin-1, "
        "which the file was likely saved in). To fix it, save the file as UTF-8 (in Excel: "
        "Save As → CSV UTF-8 (Comma delimited)), then upload it again. Nothing was imported."
    )
    assert body["fields"] == {
        "file": [
            "Not UTF-8 text; save the file as UTF-8 (in Excel: Save As → CSV UTF-8 (Comma "
            "delimited))."
        ],
        "line 2": [
            "Byte 0xE0 ('à' in Windows-1252) at character 29 of the line (byte offset 59 of "
            "the file), in “ dort.,Il se repose à peine.,neutral”."
        ],
    }
    assert not Original.objects.exists()


def test_a_latin1_jsonl_file_gets_the_jsonl_fix(api_client, nli):
    record = {"sentence1": "Il dort.", "sentence2": "Il se repose à peine.", "gold_label": "x"}
    content = json.dumps(record, ensure_ascii=False)
    response = api_client.post(url(nli), {"file": file(content.encode("cp1252"), "snli.jsonl")})
    assert response.status_code == 400
    message = response.json()["message"]
    assert message.startswith("The file is not UTF-8 text: line 1 has the byte 0xE0")
    assert "open(path, 'w', encoding='utf-8')" in message
    assert not Original.objects.exists()


def test_utf8_with_the_byte_order_mark_excel_writes_is_imported(api_client, nli):
    content = codecs.BOM_UTF8 + LATIN1.encode("utf-8")
    response = api_client.post(url(nli), {"file": file(content)}, format="multipart")
    assert response.status_code == 201, response.json()
    assert response.json()["encoding"] == "utf-8-sig"
    assert list(nli.originals.values_list("text", flat=True)) == ["Il se repose à peine."]


def test_two_files_in_one_request_are_refused_and_neither_imported(api_client, nli):
    second = CSV.replace(b"p1", b"p2")
    response = api_client.post(
        url(nli), {"file": [file(CSV), file(second, "more.csv")]}, format="multipart"
    )
    assert response.status_code == 400
    assert response.json()["fields"] == {
        "file": ["Send one file at a time; this request has 2, and only one would be read."]
    }
    assert not Original.objects.exists()
