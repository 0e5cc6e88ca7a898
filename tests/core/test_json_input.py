"""JSON nested past MAX_DEPTH, or holding NaN, is a 400 wherever a client sends it."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import URLPattern, URLResolver, get_resolver

from cfannotate.campaigns.models import Campaign, Original
from cfannotate.core.json_input import MAX_DEPTH, json_loads
from cfannotate.evaluation.models import EvaluationKind
from tests.factories import make_campaign, make_original

DEEP = "[" * 5000 + "]" * 5000  # Python's parser gives up around 1000


def _nested(levels: int) -> str:
    """A JSON value of exactly `levels` nested arrays, e.g. 2: [[0]]."""
    return "[" * levels + "0" + "]" * levels


def _api_routes() -> list[tuple[str, str]]:
    """(path pattern, method) of every API operation that takes a body."""
    routes = []

    def walk(resolver: URLResolver, prefix: str) -> None:
        for pattern in resolver.url_patterns:
            if isinstance(pattern, URLResolver):
                walk(pattern, prefix + str(pattern.pattern))
            elif isinstance(pattern, URLPattern) and (prefix + str(pattern.pattern)).startswith(
                "api/"
            ):
                view = getattr(pattern.callback, "view_class", None)
                for method in ("post", "put", "patch"):
                    if view is not None and hasattr(view, method):
                        routes.append((prefix + str(pattern.pattern), method))

    walk(get_resolver(), "")
    return routes


API_ROUTES = _api_routes()


def test_json_loads_takes_nesting_up_to_the_limit_and_names_where_it_passes():
    assert json_loads(_nested(MAX_DEPTH)) is not None
    with pytest.raises(json.JSONDecodeError) as too_deep:
        json_loads(_nested(MAX_DEPTH + 1))
    assert too_deep.value.msg == f"nested deeper than {MAX_DEPTH} levels"
    assert too_deep.value.pos == MAX_DEPTH  # the first bracket past the limit
    with pytest.raises(json.JSONDecodeError, match="nested deeper"):
        json_loads('{"brackets in text do not count": "[[[[", "a": ' + DEEP + "}")
    for constant in ("NaN", "Infinity", "-Infinity"):
        with pytest.raises(json.JSONDecodeError, match=f"{constant} is not a JSON number"):
            json_loads(f'{{"x": {constant}}}')


def test_no_api_operation_fails_on_a_deep_body(api_client, campaign):
    """Those that read the body answer 400; those that ignore it (a refresh) do their work."""
    assert len(API_ROUTES) > 15
    ids = {"campaign_id": campaign.id, "kind": "contrast"}
    for pattern, method in API_ROUTES:
        path = "/" + pattern
        for name in ("campaign_id", "kind", "run_id", "candidate_id", "gold_round_id"):
            path = path.replace(f"<int:{name}>", str(ids.get(name, 1)))
            path = path.replace(f"<str:{name}>", str(ids.get(name, 1)))
        path = path.replace("<int:decision_id>", "1").replace("<int:evaluation_id>", "1")
        response = getattr(api_client, method)(path, DEEP, content_type="application/json")
        assert response.status_code < 500, (method, path, response.status_code)
        if response.status_code >= 400:
            assert set(response.json()) == {"message", "fields"}, (method, path)


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("post", "/api/campaigns/create/"),
        ("patch", "/api/campaigns/{id}/update/"),
        ("post", "/api/campaigns/{id}/originals/import/"),
        ("post", "/api/campaigns/{id}/originals/priority/"),
    ],
)
def test_a_deep_body_is_a_400_saying_so(api_client, campaign, method, path):
    body = '{"settings": {"generators": ' + DEEP + "}}"
    response = getattr(api_client, method)(
        path.format(id=campaign.id), body, content_type="application/json"
    )
    assert response.status_code == 400
    message = response.json()["message"]
    assert message.startswith(f"JSON parse error - nested deeper than {MAX_DEPTH} levels")
    assert Campaign.objects.count() == 1


def test_nesting_up_to_the_limit_is_taken_and_one_more_level_is_not(api_client, campaign):
    """Imported records keep their other keys: `extra` may nest, to the limit."""
    url = f"/api/campaigns/{campaign.id}/originals/import/"

    def records(levels: int, external_id: str) -> str:
        # {"records": [{..., "extra": ...}]} is three levels around `extra`.
        extra = _nested(levels - 3)
        return (
            f'{{"records": [{{"id": "{external_id}", "text": "A joy.", "label": "positive", '
            f'"extra": {extra}}}]}}'
        )

    taken = api_client.post(url, records(MAX_DEPTH, "deep"), content_type="application/json")
    assert taken.status_code == 201, taken.json()
    refused = api_client.post(
        url, records(MAX_DEPTH + 1, "deeper"), content_type="application/json"
    )
    assert refused.status_code == 400
    assert "nested deeper" in refused.json()["message"]
    assert list(Original.objects.values_list("external_id", flat=True)) == ["deep"]


def test_an_upload_mapping_nested_deep_is_a_400_naming_it(api_client, campaign):
    response = api_client.post(
        f"/api/campaigns/{campaign.id}/originals/upload/",
        {
            "file": SimpleUploadedFile("r.csv", b"text,label\nA joy.,positive\n"),
            "mapping": '{"text": ' + DEEP + "}",
        },
        format="multipart",
    )
    assert response.status_code == 400
    assert response.json()["fields"] == {
        "mapping": [f"Value must be valid JSON: nested deeper than {MAX_DEPTH} levels."]
    }


def test_an_uploaded_jsonl_line_nested_deep_is_listed_as_a_bad_line(api_client, campaign):
    lines = b'{"text": "A joy.", "label": "positive"}\n{"text": "x", "label": ' + DEEP.encode()
    response = api_client.post(
        f"/api/campaigns/{campaign.id}/originals/upload/",
        {"file": SimpleUploadedFile("r.jsonl", lines + b"}\n"), "dry_run": "true"},
        format="multipart",
    )
    assert response.status_code == 200
    errors = response.json()["errors"]
    assert list(errors) == ["line 2"]
    assert f"nested deeper than {MAX_DEPTH} levels" in errors["line 2"][0]


def test_an_uploaded_evaluation_file_nested_deep_is_refused_on_the_page(client, researcher):
    campaign = make_campaign(owner=researcher)
    make_original(campaign)
    client.force_login(researcher)
    response = client.post(
        f"/campaigns/{campaign.id}/evaluation/run/",
        {
            "kind": EvaluationKind.TABLE2,
            "predictions": SimpleUploadedFile("p.jsonl", DEEP.encode()),
        },
    )
    assert response.status_code == 400
    assert f"nested deeper than {MAX_DEPTH} levels" in response.content.decode()


@pytest.mark.parametrize(
    ("body", "where"),
    [
        ({"records": [{"id": "n1", "text": "a\u0000b", "label": "positive"}]}, "records[0].text"),
        (
            {"records": [{"id": "n1", "text": "A joy.", "label": "positive", "n\u0000": 1}]},
            "a key of records[0]",
        ),
    ],
)
def test_a_nul_character_anywhere_in_a_body_is_a_400_naming_where(
    api_client, campaign, body, where
):
    """PostgreSQL cannot store NUL in text: it was stored on SQLite and a 500 on PostgreSQL."""
    response = api_client.post(
        f"/api/campaigns/{campaign.id}/originals/import/", body, format="json"
    )
    assert response.status_code == 400
    assert response.json() == {
        "message": f"The body holds a NUL character (\\u0000) in {where}; remove it.",
        "fields": {where: ["Holds a NUL character (\\u0000); remove it."]},
    }
    assert not Original.objects.exists()


def test_a_nul_character_in_a_setting_or_an_upload_mapping_is_refused(api_client, campaign):
    before = Campaign.objects.values().get(pk=campaign.pk)
    response = api_client.patch(
        f"/api/campaigns/{campaign.id}/update/",
        {"settings": {"flip_label_map": {"LAB\u0000EL": "positive"}}},
        format="json",
    )
    assert response.status_code == 400
    assert "a key of settings.flip_label_map" in response.json()["message"]
    assert Campaign.objects.values().get(pk=campaign.pk) == before

    response = api_client.post(
        f"/api/campaigns/{campaign.id}/originals/upload/",
        {
            "file": SimpleUploadedFile("r.csv", b"text,label\nA joy.,positive\n"),
            "mapping": '{"text": "te\\u0000xt"}',
        },
        format="multipart",
    )
    assert response.status_code == 400
    assert response.json()["fields"] == {
        "mapping": ["Holds a NUL character (\\u0000) at text; remove it."]
    }
