"""The crowd models in the admin: every page renders; the log is read-only; block works."""

import pytest
from django.contrib import admin
from django.urls import reverse

from cfannotate.crowd.models import (
    AssignmentReview,
    BlockScope,
    InvitationLink,
    MTurkHit,
    PersonalLink,
    PlatformAction,
    Publication,
    Worker,
    WorkerBlock,
    WorkerStatus,
)
from cfannotate.crowd.services import personal_link_create
from tests.factories import make_assignment, make_platform_records, make_user, make_worker

pytestmark = pytest.mark.django_db
CROWD_MODELS = [
    Worker,
    Publication,
    MTurkHit,
    InvitationLink,
    PersonalLink,
    WorkerBlock,
    AssignmentReview,
    PlatformAction,
]


@pytest.fixture
def staff(client):
    client.force_login(make_user("root", is_staff=True, is_superuser=True))
    return client


@pytest.fixture
def populated(campaign):
    assignment = make_assignment(campaign)
    make_platform_records(campaign, assignment)
    personal_link_create(campaign=campaign, worker_name="ann")
    WorkerBlock.objects.create(
        worker=assignment.worker,
        scope=BlockScope.CAMPAIGN,
        researcher=campaign.owner,
        campaign=campaign,
        reason="Spam.",
    )
    return campaign


def test_every_crowd_model_has_working_admin_pages(staff, populated):
    for model in CROWD_MODELS:
        assert model in admin.site._registry, model
        opts = model._meta
        changelist = reverse(f"admin:{opts.app_label}_{opts.model_name}_changelist")
        assert staff.get(changelist).status_code == 200, changelist
        assert staff.get(changelist, {"q": "x"}).status_code == 200, changelist
        change = reverse(
            f"admin:{opts.app_label}_{opts.model_name}_change", args=[model.objects.first().pk]
        )
        assert staff.get(change).status_code == 200, change


def test_the_action_log_cannot_be_edited(staff, populated):
    action = PlatformAction.objects.get()
    url = reverse("admin:crowd_platformaction_change", args=[action.pk])
    staff.post(url, {"outcome": "succeeded"})
    assert PlatformAction.objects.get().outcome == "local"
    assert staff.get(reverse("admin:crowd_platformaction_add")).status_code == 403


def test_the_block_action_blocks_link_workers(staff, db):
    worker = make_worker()
    response = staff.post(
        reverse("admin:crowd_worker_changelist"),
        {"action": "block_workers", "_selected_action": [worker.pk]},
        follow=True,
    )
    assert f"Blocked {worker}" in response.content.decode()
    worker.refresh_from_db()
    assert worker.status == WorkerStatus.BLOCKED and worker.blocked_reason == "Blocked by root."


def test_revoking_a_personal_link_in_the_admin_uses_the_service(staff, campaign):
    link = personal_link_create(campaign=campaign, worker_name="ann")
    response = staff.post(
        reverse("admin:crowd_personallink_changelist"),
        {"action": "revoke_links", "_selected_action": [link.pk]},
        follow=True,
    )
    assert "Revoked 1 personal link." in response.content.decode()
    link.refresh_from_db()
    assert link.revoked_at is not None
