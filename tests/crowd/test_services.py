from datetime import timedelta

import pytest
from django.utils import timezone

from cfannotate.core.exceptions import Conflict, Expired, Forbidden, InvalidInput
from cfannotate.crowd.models import BlockScope, Platform, Worker, WorkerStatus
from cfannotate.crowd.services import (
    SessionInFlight,
    assignment_enter,
    invitation_link_close,
    invitation_link_create,
    link_enter,
    worker_block_local,
    worker_get_or_create,
)
from cfannotate.labeling.assignments import AssignmentInFlight, NoWorkLeft, assignment_start
from cfannotate.labeling.models import Assignment, AssignmentState, LabelingUnit
from tests.factories import make_labeling_campaign, make_worker

pytestmark = pytest.mark.django_db


def test_a_worker_is_registered_once_and_found_again():
    first = worker_get_or_create(platform=Platform.LINK, external_id=" w1 ")
    assert worker_get_or_create(platform=Platform.LINK, external_id="w1").id == first.id
    assert Worker.objects.count() == 1


@pytest.mark.parametrize(
    ("platform", "external_id", "message"),
    [
        ("fiverr", "w1", "Unknown platform"),
        (Platform.LINK, "", "worker id is required"),
        (Platform.LINK, "x" * 201, "at most 200"),
        (Platform.LINK, "tab\there", "printable"),
    ],
)
def test_bad_worker_ids_are_refused(platform, external_id, message):
    with pytest.raises(InvalidInput, match=message):
        worker_get_or_create(platform=platform, external_id=external_id)
    assert not Worker.objects.exists()


def test_a_blocked_worker_is_refused():
    Worker.objects.create(platform=Platform.LINK, external_id="w9", status=WorkerStatus.BLOCKED)
    with pytest.raises(Forbidden, match="cannot take tasks"):
        worker_get_or_create(platform=Platform.LINK, external_id="w9")


# --- Binding platform entries to assignments ---------------------------------------------------


@pytest.fixture
def open_campaign(db):
    return make_labeling_campaign(units=4, rounds_per_assignment=2, gold_rounds_per_assignment=0)


def test_an_entry_resumes_its_own_platform_assignment(open_campaign):
    worker = worker_get_or_create(platform=Platform.MTURK, external_id="AW1")
    first = assignment_enter(
        campaign=open_campaign, worker=worker, platform_assignment_id="A1", platform_task_id="H1"
    )
    again = assignment_enter(
        campaign=open_campaign, worker=worker, platform_assignment_id="A1", platform_task_id="H1"
    )
    assert again.id == first.id and Assignment.objects.count() == 1


def test_another_worker_cannot_take_over_a_platform_assignment(open_campaign):
    owner = worker_get_or_create(platform=Platform.MTURK, external_id="AW1")
    other = worker_get_or_create(platform=Platform.MTURK, external_id="AW2")
    assignment_enter(
        campaign=open_campaign, worker=owner, platform_assignment_id="A1", platform_task_id="H1"
    )
    with pytest.raises(Forbidden, match="another worker"):
        assignment_enter(
            campaign=open_campaign, worker=other, platform_assignment_id="A1", platform_task_id="H1"
        )
    with pytest.raises(Forbidden, match="another worker or task"):
        assignment_enter(
            campaign=open_campaign, worker=owner, platform_assignment_id="A1", platform_task_id="H9"
        )


def test_a_second_session_of_the_same_worker_is_refused_not_rebound(open_campaign):
    worker = worker_get_or_create(platform=Platform.PROLIFIC, external_id="p1")
    first = assignment_enter(
        campaign=open_campaign, worker=worker, platform_assignment_id="S1", platform_task_id="ST"
    )
    with pytest.raises(SessionInFlight, match="another Prolific session"):
        assignment_enter(
            campaign=open_campaign,
            worker=worker,
            platform_assignment_id="S2",
            platform_task_id="ST",
        )
    first.refresh_from_db()
    assert first.platform_assignment_id == "S1" and Assignment.objects.count() == 1
    # Nor does the labeling engine hand one session's work to another.
    with pytest.raises(AssignmentInFlight):
        assignment_start(campaign=open_campaign, worker=worker, platform_assignment_id="S2")


def test_an_expired_platform_assignment_says_so(open_campaign):
    worker = worker_get_or_create(platform=Platform.PROLIFIC, external_id="p1")
    assignment = assignment_enter(
        campaign=open_campaign, worker=worker, platform_assignment_id="S1", platform_task_id="ST"
    )
    Assignment.objects.filter(pk=assignment.pk).update(
        lease_expires_at=timezone.now() - timedelta(minutes=1)
    )
    with pytest.raises(Expired, match="expired"):
        assignment_enter(
            campaign=open_campaign,
            worker=worker,
            platform_assignment_id="S1",
            platform_task_id="ST",
        )


# --- Invitation links ----------------------------------------------------------------------


def test_a_link_quota_counts_new_assignments_not_returning_workers(open_campaign):
    link = invitation_link_create(campaign=open_campaign, name="Lab", quota=1)
    first = make_worker()
    assignment = link_enter(campaign=open_campaign, worker=first, link=link)
    assert link_enter(campaign=open_campaign, worker=first, link=link).id == assignment.id
    with pytest.raises(Conflict, match=r"used up: it was for 1 assignment\."):
        link_enter(campaign=open_campaign, worker=make_worker(), link=link)
    link.refresh_from_db()
    assert link.uses == 1 and Assignment.objects.count() == 1


def test_a_failed_start_gives_the_link_use_back(db):
    campaign = make_labeling_campaign(units=1, k=1, rounds_per_assignment=1)
    link = invitation_link_create(campaign=campaign, name="Lab", quota=5)
    link_enter(campaign=campaign, worker=make_worker(), link=link)
    with pytest.raises(NoWorkLeft):
        link_enter(campaign=campaign, worker=make_worker(), link=link)
    link.refresh_from_db()
    assert link.uses == 1


def test_a_closed_link_and_bad_link_settings(open_campaign):
    link = invitation_link_create(campaign=open_campaign, name="Lab")
    invitation_link_close(link=link)
    with pytest.raises(Forbidden, match="closed"):
        link_enter(campaign=open_campaign, worker=make_worker(), link=link)
    for name, quota, field in (("", None, "name"), ("x" * 121, None, "name"), ("ok", 0, "quota")):
        with pytest.raises(InvalidInput) as caught:
            invitation_link_create(campaign=open_campaign, name=name, quota=quota)
        assert field in caught.value.fields


def test_blocking_here_ends_work_in_progress_and_frees_its_units(open_campaign):
    worker = make_worker()
    assignment = link_enter(campaign=open_campaign, worker=worker, link=None)
    assert worker_block_local(worker=worker, reason="Spam", scope=BlockScope.EVERYWHERE) == 1
    assignment.refresh_from_db()
    assert assignment.state == AssignmentState.RETURNED
    assert not LabelingUnit.objects.filter(claims__gt=0).exists()
    with pytest.raises(Forbidden):
        worker_get_or_create(platform=worker.platform, external_id=worker.external_id)


def test_a_double_load_that_loses_the_race_resumes_the_winner(open_campaign, monkeypatch):
    from django.db import IntegrityError

    from cfannotate.crowd import services
    from cfannotate.labeling.assignments import assignment_start as real_start

    worker = worker_get_or_create(platform=Platform.MTURK, external_id="AW1")
    winner = {}

    def start_after_the_other_request(**kwargs):
        winner["assignment"] = real_start(**kwargs)  # the other request commits first
        raise IntegrityError("assignment_one_active_per_worker")

    monkeypatch.setattr(services, "assignment_start", start_after_the_other_request)
    entered = assignment_enter(
        campaign=open_campaign, worker=worker, platform_assignment_id="A1", platform_task_id="H1"
    )
    assert entered.id == winner["assignment"].id and Assignment.objects.count() == 1
