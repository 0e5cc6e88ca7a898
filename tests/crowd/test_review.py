"""The review contract quality control relies on: four functions, one log, clear errors."""

import datetime
from decimal import Decimal

import pytest
from django.utils import timezone

from cfannotate.core.exceptions import CfannotateError, Conflict, InvalidInput
from cfannotate.crowd import review
from cfannotate.crowd.models import (
    ActionOutcome,
    BlockScope,
    Platform,
    PlatformAction,
    ReviewDecision,
    Worker,
    WorkerStatus,
)
from cfannotate.labeling.assignments import assignment_start
from cfannotate.labeling.models import Assignment
from tests.crowd.conftest import finish
from tests.factories import make_worker

pytestmark = pytest.mark.django_db


@pytest.fixture
def link_work(campaign):
    """A finished assignment of an invitation-link worker: no platform behind it."""
    return finish(assignment_start(campaign=campaign, worker=make_worker(Platform.LINK)))


def test_link_decisions_are_recorded_here_only(link_work):
    review.assignment_approve(assignment=link_work, feedback="Good.")
    review.worker_bonus(
        assignment=link_work, amount=Decimal("1.5"), reason="Gold all right", unique_token="k1"
    )
    review.worker_block(
        worker=link_work.worker, reason="Leaving the lab.", scope=BlockScope.EVERYWHERE
    )
    actions = PlatformAction.objects.order_by("id")
    assert [(a.action, a.outcome) for a in actions] == [
        ("approve", ActionOutcome.LOCAL),
        ("bonus", ActionOutcome.LOCAL),
        ("block", ActionOutcome.LOCAL),
    ]
    assert all(a.finished_at and a.platform == Platform.LINK for a in actions)
    assert actions[1].amount == Decimal("1.50") and actions[1].message == "Gold all right"
    assert Assignment.objects.get(pk=link_work.pk).review.decision == ReviewDecision.APPROVED
    worker = Worker.objects.get(pk=link_work.worker_id)
    assert (worker.status, worker.blocked_reason) == (WorkerStatus.BLOCKED, "Leaving the lab.")


def test_link_rejection_is_local_and_final(link_work):
    review.assignment_reject(assignment=link_work, feedback="Random labels.")
    review.assignment_reject(assignment=link_work, feedback="Random labels.")  # no-op
    assert PlatformAction.objects.filter(action="reject").count() == 1
    review.assignment_approve(assignment=link_work)  # an approval may follow a rejection
    assert Assignment.objects.get(pk=link_work.pk).review.decision == ReviewDecision.APPROVED
    with pytest.raises(Conflict, match="cannot be undone"):
        review.assignment_reject(assignment=link_work, feedback="Changed my mind.")


def test_work_in_progress_cannot_be_judged(campaign):
    assignment = assignment_start(campaign=campaign, worker=make_worker())
    with pytest.raises(Conflict, match="only submitted work"):
        review.assignment_approve(assignment=assignment)
    with pytest.raises(Conflict, match="still in progress"):
        review.assignment_reject(assignment=assignment, feedback="No.")
    with pytest.raises(Conflict, match="a bonus is paid on submitted work"):
        review.worker_bonus(
            assignment=assignment, amount=Decimal("1"), reason="r", unique_token="t"
        )
    assert not PlatformAction.objects.exists()


@pytest.mark.parametrize(
    ("amount", "reason", "token", "field"),
    [
        (Decimal("0"), "r", "t", "amount"),
        (Decimal("0.005"), "r", "t", "amount"),
        (Decimal("20.01"), "r", "t", "amount"),
        ("lots", "r", "t", "amount"),
        (Decimal("NaN"), "r", "t", "amount"),
        (Decimal("1"), "  ", "t", "reason"),
        (Decimal("1"), "x" * 1025, "t", "reason"),
        (Decimal("1"), "r", "", "unique_token"),
        (Decimal("1"), "r", "t" * 65, "unique_token"),
    ],
)
def test_bad_bonus_requests_are_refused_with_the_field(link_work, amount, reason, token, field):
    with pytest.raises(InvalidInput) as caught:
        review.worker_bonus(assignment=link_work, amount=amount, reason=reason, unique_token=token)
    assert field in caught.value.fields
    assert not PlatformAction.objects.exists()


def test_the_bonus_ceiling_is_a_setting(link_work, settings):
    settings.CROWD_MAX_BONUS = "100"
    review.worker_bonus(assignment=link_work, amount=Decimal("50"), reason="r", unique_token="big")


def test_a_token_used_for_another_bonus_is_refused(link_work, campaign):
    other = finish(assignment_start(campaign=campaign, worker=make_worker()))
    review.worker_bonus(assignment=link_work, amount=Decimal("1"), reason="r", unique_token="t")
    with pytest.raises(Conflict, match="already used for another bonus"):
        review.worker_bonus(assignment=other, amount=Decimal("1"), reason="r", unique_token="t")
    with pytest.raises(Conflict, match="already used for another bonus"):
        review.worker_bonus(assignment=link_work, amount=Decimal("2"), reason="r", unique_token="t")


def test_a_bonus_in_flight_blocks_its_token_until_it_is_stale(link_work):
    pending = PlatformAction.objects.create(
        platform=Platform.LINK,
        action="bonus",
        assignment=link_work,
        worker=link_work.worker,
        request_token="t",
        amount=Decimal("1"),
    )
    with pytest.raises(Conflict, match="being paid right now"):
        review.worker_bonus(assignment=link_work, amount=Decimal("1"), reason="r", unique_token="t")
    stale = timezone.now() - review.STALE_PENDING - datetime.timedelta(seconds=1)
    PlatformAction.objects.filter(pk=pending.pk).update(created_at=stale)
    review.worker_bonus(assignment=link_work, amount=Decimal("1"), reason="r", unique_token="t")
    outcomes = list(PlatformAction.objects.order_by("id").values_list("outcome", "error"))
    assert outcomes == [
        (ActionOutcome.FAILED, "Interrupted before the platform answered."),
        (ActionOutcome.LOCAL, ""),
    ]


def test_every_contract_error_is_a_cfannotate_error(link_work):
    with pytest.raises(CfannotateError):
        review.assignment_reject(assignment=link_work, feedback="")
    with pytest.raises(CfannotateError):
        review.worker_block(worker=link_work.worker, reason="", scope=BlockScope.EVERYWHERE)
    with pytest.raises(CfannotateError):  # a researcher's block names its campaign
        review.worker_block(worker=link_work.worker, reason="x", scope=BlockScope.RESEARCHER)
    assert Worker.objects.get(pk=link_work.worker_id).status == WorkerStatus.ACTIVE


def test_the_functions_take_keyword_arguments_only(link_work):
    with pytest.raises(TypeError):
        review.assignment_approve(link_work)  # type: ignore[misc]
    assert not PlatformAction.objects.exists()
