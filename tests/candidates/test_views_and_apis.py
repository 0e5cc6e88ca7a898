"""Generation runs from the campaign page (htmx) and the API; owner-scoped, clear errors."""

import pytest
from django.urls import reverse

from cfannotate.candidates.models import GenerationRun, RunState
from tests.factories import make_campaign, make_original


@pytest.fixture
def campaign(researcher):
    campaign = make_campaign(owner=researcher)
    for _ in range(3):
        make_original(campaign)
    return campaign


def test_start_shows_live_progress_and_cancel(
    client, researcher, campaign, django_capture_on_commit_callbacks
):
    client.force_login(researcher)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("run-start", args=[campaign.id]), HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    html = response.content.decode()
    run = GenerationRun.objects.get(campaign=campaign)
    assert 'hx-trigger="every 2s"' in html and "0 of 1 chunks done" in html
    assert reverse("run-cancel", args=[campaign.id, run.id]) in html
    again = client.post(reverse("run-start", args=[campaign.id]))
    assert again.status_code == 409 and "already has a generation run" in again.content.decode()
    cancelled = client.post(reverse("run-cancel", args=[campaign.id, run.id]))
    assert "Cancelled" in cancelled.content.decode()
    assert 'hx-trigger="every 2s"' not in cancelled.content.decode()  # polling stops


def test_run_pages_are_owner_scoped_and_post_only(client, other_researcher, researcher, campaign):
    client.force_login(other_researcher)
    assert client.post(reverse("run-start", args=[campaign.id])).status_code == 404
    assert client.get(reverse("run-progress", args=[campaign.id])).status_code == 404
    client.force_login(researcher)
    assert client.get(reverse("run-start", args=[campaign.id])).status_code == 405
    assert client.get(reverse("run-progress", args=[campaign.id])).status_code == 200


def test_campaign_page_shows_the_progress_block(client, researcher, campaign):
    client.force_login(researcher)
    html = client.get(reverse("campaign-detail", args=[campaign.id])).content.decode()
    assert 'id="generation-progress"' in html and "Generate candidates" in html


def test_api_start_progress_cancel_retry(api_client, campaign, django_capture_on_commit_callbacks):
    base = f"/api/campaigns/{campaign.id}/generation/"
    assert api_client.get(base).status_code == 404
    with django_capture_on_commit_callbacks(execute=True):
        started = api_client.post(base + "start/", {"chunk_size": 2}, format="json")
    assert started.status_code == 201
    body = started.json()
    assert (body["state"], body["chunks_total"], body["percent"]) == ("queued", 2, 0)
    assert api_client.get(base).json()["run"] == body["run"]
    cancelled = api_client.post(f"{base}{body['run']}/cancel/")
    assert cancelled.json()["state"] == RunState.CANCELLED
    retry = api_client.post(f"{base}{body['run']}/retry/")
    assert retry.status_code == 409 and "no failed chunks" in retry.json()["message"]


def test_api_rejects_bad_chunk_size(api_client, campaign):
    response = api_client.post(
        f"/api/campaigns/{campaign.id}/generation/start/", {"chunk_size": 0}, format="json"
    )
    assert response.status_code == 400 and "chunk_size" in response.json()["fields"]
