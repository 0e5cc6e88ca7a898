"""The crowd API: publishing, links, sync and review decisions, with the page's checks."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from cfannotate.campaigns.models import Campaign, CampaignStatus
from cfannotate.crowd.models import (
    InvitationLink,
    PersonalLink,
    Platform,
    PlatformAction,
    Publication,
    WorkerBlock,
)
from cfannotate.crowd.providers import mturk
from cfannotate.crowd.services import personal_link_create
from cfannotate.labeling.assignments import assignment_start
from tests.crowd.conftest import finish
from tests.factories import make_labeling_campaign, make_user, make_worker

pytestmark = pytest.mark.django_db
MTURK = {
    "title": "Judge sentences",
    "description": "Judge edited sentences.",
    "reward": "1.20",
    "assignments": 4,
    "locale": "us",
}
PROLIFIC = {
    "name": "Study",
    "description": "Judge",
    "places": 3,
    "reward_cents": 100,
    "minutes": 10,
}


@pytest.fixture
def owner(campaign):
    client = APIClient()
    client.force_authenticate(campaign.owner)
    return client


def _url(name, campaign, *args):
    return reverse(name, args=[campaign.id, *args])


def _post(client, name, campaign, *args, body=None):
    return client.post(_url(name, campaign, *args), body or {}, format="json")


def test_invitation_links_are_created_listed_and_closed(owner, campaign):
    created = _post(owner, "api-link-list", campaign, body={"name": "Lab", "quota": 3})
    assert created.status_code == 201
    link = created.json()
    assert (link["name"], link["quota"], link["uses"], link["is_active"]) == ("Lab", 3, 0, True)
    assert link["url"].startswith("https://labels.example.org/join/link/")
    listed = owner.get(_url("api-link-list", campaign)).json()
    assert listed["count"] == 1 and listed["results"][0]["id"] == link["id"]
    closed = _post(owner, "api-link-close", campaign, link["id"])
    assert closed.status_code == 200 and closed.json()["is_active"] is False
    assert not InvitationLink.objects.get().is_active


@pytest.mark.parametrize(
    "body, field",
    [({}, "name"), ({"name": "Lab", "quota": 0}, "quota"), ({"name": "  "}, "name")],
)
def test_a_bad_link_is_a_400_naming_the_field(owner, campaign, body, field):
    response = _post(owner, "api-link-list", campaign, body=body)
    assert response.status_code == 400
    assert field in response.json()["fields"] and response.json()["message"]
    assert not InvitationLink.objects.exists()


def test_personal_links_are_made_listed_and_revoked(owner, campaign):
    created = _post(owner, "api-personal-link-list", campaign, body={"worker": "ann", "days": 14})
    assert created.status_code == 201
    body = created.json()
    assert body["worker"] == "ann" and body["revoked_at"] is None
    assert body["url"].startswith("https://labels.example.org/join/personal/")
    link = PersonalLink.objects.get()
    assert link.created_by == campaign.owner
    assert timedelta(days=13) < link.expires_at - timezone.now() <= timedelta(days=14)
    listed = owner.get(_url("api-personal-link-list", campaign)).json()
    assert [row["worker"] for row in listed["results"]] == ["ann"]
    revoked = _post(owner, "api-personal-link-revoke", campaign, link.id)
    assert revoked.status_code == 200
    assert revoked.json()["revoked_at"] and revoked.json()["url"] is None


@pytest.mark.parametrize(
    "body, field",
    [
        ({"worker": "ann", "days": 400}, "days"),
        ({"worker": "link-abcdefghijklmnop"}, "worker"),
        ({"days": 3}, "worker"),
    ],
)
def test_a_bad_personal_link_is_a_400(owner, campaign, body, field):
    response = _post(owner, "api-personal-link-list", campaign, body=body)
    assert response.status_code == 400 and field in response.json()["fields"]
    assert not PersonalLink.objects.exists()


def test_publishing_on_mturk(owner, campaign, mturk_stub):
    mturk_stub.add_response("create_hit_type", {"HITTypeId": "HT"})
    mturk_stub.add_response("create_hit_with_hit_type", {"HIT": {"HITId": "HITA"}})
    response = _post(owner, "api-mturk-publish", campaign, body=MTURK)
    assert response.status_code == 201, response.json()
    body = response.json()
    assert (body["platform"], body["sandbox"], body["hits"]) == ("mturk", True, ["HITA"])
    assert body["entry_url"].startswith("https://labels.example.org/join/mturk/")
    publication = Publication.objects.get()
    assert publication.options["locale"] == "US" and publication.created_by == campaign.owner
    listed = owner.get(_url("api-publication-list", campaign)).json()
    assert [row["id"] for row in listed["results"]] == [publication.id]


def test_publishing_a_paused_campaign_is_a_conflict(owner, campaign, mturk_stub):
    Campaign.objects.filter(pk=campaign.pk).update(status=CampaignStatus.PAUSED)
    response = _post(owner, "api-mturk-publish", campaign, body=MTURK)
    assert response.status_code == 409
    assert "Open the campaign for labeling" in response.json()["message"]
    assert not Publication.objects.exists()


@pytest.mark.parametrize(
    "change, field",
    [
        ({"title": None}, "title"),
        ({"reward": "500"}, "reward"),  # the MTurk options' own rule: at most 100 dollars
        ({"reward": "1.234"}, "reward"),
        ({"assignments": 0}, "assignments"),
        ({"locale": "USA"}, "locale"),
    ],
)
def test_bad_mturk_options_are_a_400_naming_the_field(owner, campaign, mturk_stub, change, field):
    body = {key: value for key, value in {**MTURK, **change}.items() if value is not None}
    response = _post(owner, "api-mturk-publish", campaign, body=body)
    assert response.status_code == 400 and field in response.json()["fields"]
    assert not Publication.objects.exists()


def test_publishing_without_https_explains_the_setting(owner, campaign, settings, mturk_stub):
    settings.CROWD_PUBLIC_URL = ""
    response = _post(owner, "api-mturk-publish", campaign, body=MTURK)
    assert response.status_code == 400 and "CFANNOTATE_PUBLIC_URL" in response.json()["message"]


def test_publishing_without_credentials_records_nothing(owner, campaign, settings, monkeypatch):
    monkeypatch.setattr(mturk, "mturk_credentials_found", lambda: False)
    settings.CROWD_PROLIFIC_TOKEN = ""
    for name, body, says in [
        ("api-mturk-publish", MTURK, "MTurk credentials are not configured"),
        ("api-prolific-study", PROLIFIC, "CFANNOTATE_PROLIFIC_TOKEN is not set"),
    ]:
        for _ in range(2):
            response = _post(owner, name, campaign, body=body)
            assert response.status_code == 502 and says in response.json()["message"]
    assert not Publication.objects.exists() and not PlatformAction.objects.exists()


def test_a_refusal_of_the_platform_itself_is_kept_as_a_failed_publication(
    owner, campaign, mturk_stub
):
    mturk_stub.add_client_error("create_hit_type", service_error_code="ServiceFailure")
    response = _post(owner, "api-mturk-publish", campaign, body=MTURK)
    assert response.status_code == 502
    assert Publication.objects.get().status == "failed"
    assert PlatformAction.objects.get(action="publish").outcome == "failed"


def test_a_prolific_draft_study(owner, campaign, prolific):
    response = _post(owner, "api-prolific-study", campaign, body=PROLIFIC)
    assert response.status_code == 201, response.json()
    assert response.json()["platform"] == Platform.PROLIFIC
    assert Publication.objects.get().platform == Platform.PROLIFIC
    bad = _post(owner, "api-prolific-study", campaign, body={**PROLIFIC, "minutes": 0})
    assert bad.status_code == 400 and "minutes" in bad.json()["fields"]


def test_sync_reports_what_it_found(owner, campaign, prolific):
    Publication.objects.create(
        campaign=campaign, platform=Platform.PROLIFIC, external_id="s" * 24, options={}
    )
    prolific.studies["s" * 24] = {"id": "s" * 24, "status": "ACTIVE"}
    response = _post(owner, "api-platform-sync", campaign)
    assert response.status_code == 200
    body = response.json()
    assert (body["checked"], body["updated"], body["problems"]) == (0, 1, [])
    assert body["summary"] == "1 study or HIT refreshed, 0 submissions checked."


def test_review_decisions(owner, campaign):
    assignment = finish(assignment_start(campaign=campaign, worker=make_worker()))
    approved = _post(owner, "api-assignment-approve", campaign, assignment.id)
    assert approved.status_code == 200 and approved.json()["decision"] == "approved"
    rejected = _post(
        owner, "api-assignment-reject", campaign, assignment.id, body={"feedback": "No"}
    )
    assert rejected.status_code == 409 and "cannot be undone" in rejected.json()["message"]
    bonus = {"amount": "0.50", "reason": "Good", "unique_token": "token-1"}
    for _ in range(2):  # the same token pays once
        paid = _post(owner, "api-worker-bonus", campaign, assignment.id, body=bonus)
        assert paid.status_code == 200
    assert PlatformAction.objects.filter(action="bonus").count() == 1
    blocked = _post(
        owner, "api-worker-block", campaign, assignment.worker_id, body={"reason": "Spam"}
    )
    assert blocked.status_code == 200 and blocked.json()["scope"] == "researcher"
    assert WorkerBlock.objects.get(worker_id=assignment.worker_id).scope == "researcher"


def test_review_errors_have_the_pages_statuses(owner, campaign):
    in_progress = assignment_start(campaign=campaign, worker=make_worker())
    conflict = _post(owner, "api-assignment-approve", campaign, in_progress.id)
    assert conflict.status_code == 409 and "only submitted work" in conflict.json()["message"]
    missing = _post(owner, "api-assignment-reject", campaign, in_progress.id)
    assert missing.status_code == 400 and "feedback" in missing.json()["fields"]
    everywhere = _post(
        owner,
        "api-worker-block",
        campaign,
        in_progress.worker_id,
        body={"reason": "x", "scope": "everywhere"},  # an administrator's block only
    )
    assert everywhere.status_code == 400 and "scope" in everywhere.json()["fields"]
    other = make_labeling_campaign(units=2)
    elsewhere = finish(assignment_start(campaign=other, worker=make_worker()))
    foreign = _post(owner, "api-assignment-approve", campaign, elsewhere.id)
    assert foreign.status_code == 404 and "No assignment" in foreign.json()["message"]
    stranger = _post(owner, "api-worker-block", campaign, elsewhere.worker_id, body={"reason": "x"})
    assert stranger.status_code == 404
    assert not PlatformAction.objects.exists() and not WorkerBlock.objects.exists()


def test_every_operation_is_the_owners_only(campaign):
    link = InvitationLink.objects.create(campaign=campaign, name="Lab")
    personal = personal_link_create(campaign=campaign, worker_name="ann")
    assignment = finish(assignment_start(campaign=campaign, worker=make_worker()))
    posts = [
        ("api-link-list", ()),
        ("api-link-close", (link.id,)),
        ("api-personal-link-list", ()),
        ("api-personal-link-revoke", (personal.id,)),
        ("api-mturk-publish", ()),
        ("api-prolific-study", ()),
        ("api-platform-sync", ()),
        ("api-assignment-approve", (assignment.id,)),
        ("api-assignment-reject", (assignment.id,)),
        ("api-worker-bonus", (assignment.id,)),
        ("api-worker-block", (assignment.worker_id,)),
    ]
    anonymous, stranger = APIClient(), APIClient()
    stranger.force_authenticate(make_user())
    for name, args in posts:
        assert anonymous.post(_url(name, campaign, *args)).status_code in (401, 403)
        response = _post(stranger, name, campaign, *args)
        assert response.status_code == 404, name
        assert response.json()["message"].startswith("No campaign")
    for name in ("api-link-list", "api-personal-link-list", "api-publication-list"):
        assert stranger.get(_url(name, campaign)).status_code == 404
    assert InvitationLink.objects.get().is_active and PersonalLink.objects.get().revoked_at is None
    assert not PlatformAction.objects.exists() and not Publication.objects.exists()


def test_a_link_of_another_campaign_is_not_found(owner, campaign):
    other = make_labeling_campaign(units=1)
    link = InvitationLink.objects.create(campaign=other, name="Theirs")
    response = _post(owner, "api-link-close", campaign, link.id)
    assert response.status_code == 404 and "No invitation link" in response.json()["message"]
    assert InvitationLink.objects.get().is_active
