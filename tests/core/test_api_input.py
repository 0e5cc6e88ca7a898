"""Request bodies: a key an endpoint does not take is a 400 under its name, not dropped; a
number in a body, a query or a page number is read only when written in plain digits."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import URLPattern, URLResolver, get_resolver

from cfannotate.campaigns.models import Campaign, Original
from cfannotate.candidates.models import CandidateStatus
from cfannotate.core.api_input import BodySerializer
from tests.factories import make_candidate, make_original

pytestmark = pytest.mark.django_db


def _api_views_taking_a_body() -> list[type]:
    views = []

    def walk(resolver: URLResolver, prefix: str) -> None:
        for pattern in resolver.url_patterns:
            path = prefix + str(pattern.pattern)
            if isinstance(pattern, URLResolver):
                walk(pattern, path)
            elif isinstance(pattern, URLPattern) and path.startswith("api/"):
                view = getattr(pattern.callback, "view_class", None)
                if view is not None and any(hasattr(view, m) for m in ("post", "put", "patch")):
                    views.append(view)

    walk(get_resolver(), "")
    return views


def test_every_body_the_api_reads_refuses_keys_it_does_not_take():
    readers = [view for view in _api_views_taking_a_body() if hasattr(view, "InputSerializer")]
    assert len(readers) >= 20  # the walk found the API
    lenient = [v.__name__ for v in readers if not issubclass(v.InputSerializer, BodySerializer)]
    assert lenient == []


def test_a_misspelt_review_key_is_refused_and_nothing_changes(api_client, campaign):
    candidate = make_candidate(make_original(campaign))
    response = api_client.post(
        f"/api/campaigns/{campaign.id}/candidates/review/", {"acept": [candidate.pk]}, format="json"
    )
    assert response.status_code == 400
    assert response.json()["fields"] == {
        "acept": ["Not a field of this request; it takes accept, reject."]
    }
    candidate.refresh_from_db()
    assert candidate.status == CandidateStatus.GENERATED


def test_a_setting_beside_settings_is_refused_not_left_at_its_default(api_client):
    response = api_client.post(
        "/api/campaigns/create/",
        {"name": "Top", "task_type": "sentiment", "judgments_per_candidate": 5},
        format="json",
    )
    assert response.status_code == 400
    (problem,) = response.json()["fields"]["judgments_per_candidate"]
    assert problem.startswith("Not a field of this request; it takes name, task_type, ")
    assert "settings" in problem
    assert not Campaign.objects.exists()


def test_an_upload_names_an_unknown_form_field_and_takes_a_browsers_csrf_token(
    api_client, campaign
):
    url = f"/api/campaigns/{campaign.id}/originals/upload/"

    def upload(**fields):
        data = {"file": SimpleUploadedFile("r.csv", b"text,label\nA joy.,positive\n"), **fields}
        return api_client.post(url, data, format="multipart")

    refused = upload(dryrun="true")
    assert refused.status_code == 400
    assert list(refused.json()["fields"]) == ["dryrun"]
    assert not Original.objects.exists()
    assert upload(csrfmiddlewaretoken="token").status_code == 201
    assert Original.objects.count() == 1


def test_a_gold_items_unknown_key_is_named_where_it_is(api_client, campaign):
    original = make_original(campaign)
    response = api_client.post(
        f"/api/campaigns/{campaign.id}/gold/",
        {
            "original": original.pk,
            "kind": "gold",
            "items": [{"text": "It was awful.", "valid": True, "label": "negative", "lable": "x"}],
        },
        format="json",
    )
    assert response.status_code == 400
    assert list(response.json()["fields"]) == ["items.0.lable"]


def test_ids_written_other_than_in_plain_digits_are_refused_and_nothing_changes(
    api_client, campaign
):
    candidate = make_candidate(make_original(campaign))
    url = f"/api/campaigns/{campaign.id}/candidates/review/"

    response = api_client.post(url, {"accept": [str(candidate.pk), "1_0"]}, format="json")
    assert response.status_code == 400
    assert response.json()["fields"] == {"accept.1": ["Enter a whole number. Use digits, e.g. 12."]}
    candidate.refresh_from_db()
    assert candidate.status == CandidateStatus.GENERATED

    # A plain number as text is what a form would send: taken, as DRF takes it.
    assert api_client.post(url, {"accept": [str(candidate.pk)]}, format="json").status_code == 200
    candidate.refresh_from_db()
    assert candidate.status == CandidateStatus.SELECTED


def test_a_number_in_another_script_is_named_beside_an_unknown_key(api_client, campaign):
    response = api_client.post(
        f"/api/campaigns/{campaign.id}/generation/start/",
        {"chunk_size": "\u0661\u0662", "chunk": 3},
        format="json",
    )
    assert response.status_code == 400
    fields = response.json()["fields"]
    assert fields["chunk_size"] == ["Enter a whole number. Use digits, e.g. 12."]
    assert fields["chunk"][0].startswith("Not a field of this request")
    assert not campaign.runs.exists()


def test_query_numbers_and_pages_written_other_than_in_plain_digits_are_refused(
    api_client, campaign
):
    original = make_original(campaign)
    make_candidate(original)
    url = f"/api/campaigns/{campaign.id}/candidates/"
    assert api_client.get(url, {"original": str(original.pk)}).json()["count"] == 1

    for bad in ("1_0", "\u0661"):
        response = api_client.get(url, {"original": bad})
        assert response.status_code == 400, bad
        assert response.json()["fields"] == {
            "original": ["Enter a whole number. Use digits, e.g. 12."]
        }
    fluency = api_client.get(url, {"min_fluency": "1_0", "original": "2_0"})
    assert fluency.status_code == 400
    assert set(fluency.json()["fields"]) == {"min_fluency", "original"}

    # Every paginated list reads its page in plain digits (`last` as DRF allows).
    assert api_client.get(url, {"page": "1"}).status_code == 200
    assert api_client.get(url, {"page": "last"}).status_code == 200
    for page in ("1_0", "\u0661", "+1"):
        response = api_client.get("/api/campaigns/", {"page": page})
        assert response.status_code == 404, page
        assert "a page is a number in plain digits" in response.json()["message"]


def test_every_list_the_api_pages_reads_its_page_strictly():
    from cfannotate.core.pagination import PageNumbers

    paged = []

    def walk(resolver: URLResolver) -> None:
        for pattern in resolver.url_patterns:
            if isinstance(pattern, URLResolver):
                walk(pattern)
                continue
            view = getattr(pattern.callback, "view_class", None)
            if getattr(view, "pagination_class", None) is not None:
                paged.append(view)

    walk(get_resolver())
    assert len(paged) >= 8
    assert [v.__name__ for v in paged if not issubclass(v.pagination_class, PageNumbers)] == []
