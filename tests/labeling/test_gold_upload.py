"""Gold and training rounds from an uploaded JSONL file: on the gold page (htmx and a plain
form) and through the API, all lines or none, each bad line named."""

import json

import pytest
from django.contrib.messages import get_messages
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from cfannotate.labeling.models import GoldItem, GoldRound, LabelingUnit
from tests.factories import make_original, make_unit

pytestmark = pytest.mark.django_db


def _round(original, kind="gold", label="negative"):
    return {
        "original_id": original.external_id,
        "kind": kind,
        "items": [
            {"text": "It was awful.", "valid": True, "label": label},
            {"text": "It was <b>wonderful</b>!", "valid": True, "label": "positive"},
            {"text": "Was it it.", "valid": False, "label": "negative", "explanation": "Broken."},
        ],
    }


def _file(*records, name="gold.jsonl"):
    lines = "".join(json.dumps(record) + "\n" for record in records)
    return SimpleUploadedFile(name, lines.encode(), content_type="application/jsonl")


def test_the_page_imports_a_file_of_rounds(client, researcher, campaign):
    first, second = make_original(campaign), make_original(campaign)
    unit = make_unit(second)  # in a unit no worker was given: it leaves it
    client.force_login(researcher)

    response = client.post(
        reverse("gold-import", args=[campaign.id]),
        {"file": _file(_round(first), _round(second, kind="training"))},
        HTTP_HX_REQUEST="true",
    )

    assert response.status_code == 200
    assert response["HX-Redirect"] == reverse("gold-page", args=[campaign.id])
    [message] = [str(m) for m in get_messages(response.wsgi_request)]
    assert message == "Imported 2 rounds from gold.jsonl."
    assert sorted(GoldRound.objects.values_list("kind", flat=True)) == ["gold", "training"]
    assert GoldItem.objects.filter(gold_round__original=first).count() == 3
    assert not LabelingUnit.objects.filter(pk=unit.pk).exists()
    page = client.get(reverse("gold-page", args=[campaign.id])).content.decode()
    assert "It was &lt;b&gt;wonderful&lt;/b&gt;!" in page and "<b>wonderful" not in page


def test_a_bad_file_says_each_bad_line_in_place_and_imports_nothing(client, researcher, campaign):
    original = make_original(campaign)
    client.force_login(researcher)
    url = reverse("gold-import", args=[campaign.id])

    bad_rows = _file(_round(original), {"original_id": "nope", "items": []})
    response = client.post(url, {"file": bad_rows}, HTTP_HX_REQUEST="true")
    html = " ".join(response.content.decode().split())
    assert response.status_code == 400
    assert 'id="gold-import"' in html and "No original &#x27;nope&#x27;" in html
    assert "<h1>" not in html  # the upload block alone, swapped in place

    not_json = SimpleUploadedFile("gold.jsonl", b'{"original_id": \n', "application/jsonl")
    response = client.post(url, {"file": not_json}, HTTP_HX_REQUEST="true")
    assert response.status_code == 400 and "gold.jsonl: line 1" in response.content.decode()

    response = client.post(url, {}, HTTP_HX_REQUEST="true")
    assert response.status_code == 400
    assert "Choose a JSONL file of rounds to upload." in response.content.decode()

    latin1 = SimpleUploadedFile("gold.jsonl", '{"text": "café"}\n'.encode("latin-1"))
    response = client.post(url, {"file": latin1}, HTTP_HX_REQUEST="true")
    assert response.status_code == 400 and "not UTF-8" in response.content.decode()
    assert not GoldRound.objects.exists()


def test_without_javascript_a_bad_file_comes_back_on_the_whole_page(client, researcher, campaign):
    make_original(campaign)
    client.force_login(researcher)
    response = client.post(
        reverse("gold-import", args=[campaign.id]), {"file": _file({"original_id": "nope"})}
    )
    html = response.content.decode()
    assert response.status_code == 400
    assert "<h1>Gold and training rounds</h1>" in html and "No original &#x27;nope&#x27;" in html

    original = make_original(campaign)
    response = client.post(
        reverse("gold-import", args=[campaign.id]), {"file": _file(_round(original))}
    )
    assert response.status_code == 302
    assert response["Location"] == reverse("gold-page", args=[campaign.id])
    assert GoldRound.objects.count() == 1


def test_the_api_imports_the_same_file(api_client, campaign):
    original = make_original(campaign)
    url = reverse("api-gold-import", args=[campaign.id])

    refused = api_client.post(url, {"file": _file(_round(original, label="sideways"))})
    assert refused.status_code == 400
    assert "sideways" in json.dumps(refused.json()) and not GoldRound.objects.exists()
    assert api_client.post(url, {}).status_code == 400

    response = api_client.post(url, {"file": _file(_round(original))})
    assert response.status_code == 201 and response.json() == {"imported": 1}
    listed = api_client.get(reverse("api-gold-list", args=[campaign.id])).json()
    assert [item["text"] for item in listed["results"][0]["items"]] == [
        "It was awful.",
        "It was <b>wonderful</b>!",
        "Was it it.",
    ]


def test_two_files_in_one_request_are_refused_by_the_api_and_the_page(
    client, api_client, researcher, campaign
):
    original = make_original(campaign)
    files = [_file(_round(original)), _file(_round(original, kind="training"))]
    refused = api_client.post(reverse("api-gold-import", args=[campaign.id]), {"file": files})
    assert refused.status_code == 400
    assert refused.json()["fields"] == {
        "file": ["Send one file at a time; this request has 2, and only one would be read."]
    }
    client.force_login(researcher)
    files = [_file(_round(original)), _file(_round(original, kind="training"))]
    page = client.post(
        reverse("gold-import", args=[campaign.id]), {"file": files}, HTTP_HX_REQUEST="true"
    )
    assert page.status_code == 400 and "Send one file at a time" in page.content.decode()
    assert not GoldRound.objects.exists()


def test_only_the_owner_imports(client, api_client, other_researcher, campaign):
    original = make_original(campaign)
    client.force_login(other_researcher)
    response = client.post(
        reverse("gold-import", args=[campaign.id]), {"file": _file(_round(original))}
    )
    assert response.status_code == 404
    api_client.force_authenticate(other_researcher)
    response = api_client.post(
        reverse("api-gold-import", args=[campaign.id]), {"file": _file(_round(original))}
    )
    assert response.status_code == 404
    assert client.get(reverse("gold-import", args=[campaign.id])).status_code in (404, 405)
    assert not GoldRound.objects.exists()
