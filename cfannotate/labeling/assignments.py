"""The assignment engine: start an assignment, claim units without overbooking, expire leases.

Design note: `assignments.md` beside this module (Polyjuice §4.2 and Appendix C.2).
"""

import itertools
import math
import random
import secrets
import time
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone

from cfannotate.campaigns.models import Campaign, CampaignStatus
from cfannotate.core.exceptions import Conflict, Expired
from cfannotate.core.worker_tokens import new_nonce
from cfannotate.labeling.hooks import (
    admission_checks,
    assignment_ended,
    return_explanations,
    run_checks,
)
from cfannotate.labeling.models import (
    Assignment,
    AssignmentState,
    GoldKind,
    GoldRound,
    LabelingUnit,
    Round,
    RoundKind,
)

if TYPE_CHECKING:
    from cfannotate.crowd.models import Worker


class NoWorkLeft(Conflict):
    """Nothing to hand this worker now: the task is closed, its units are taken or done, or
    the worker was filtered out. `come_back` says, in one sentence, whether to come back."""

    title = "No work right now"

    def __init__(self, message: str, *, come_back: str = "") -> None:
        super().__init__(message)
        self.come_back = come_back


class AssignmentInFlight(Conflict):
    """The worker has an assignment in progress here, bound to another platform session."""


# How long a claimer waits for units that other claimers hold locked but may not fill.
CLAIM_PATIENCE_SECONDS = 3.0
CLAIM_RETRY_SECONDS = 0.02
NO_WORK_LEFT = "There is no work left in this task for you. Thank you for your help!"
ALL_TAKEN = "There is no work left for you right now: other workers are doing the last rounds."
FILTERED = (
    "There is no more work in this task for you: your answers on the check rounds did not "
    "meet this task's quality bar. Thank you for your time."
)
NO_NEED = "There is no need to come back: this task has nothing more for you."
FINISHED = "This task is finished: all of its work is done. Thank you for your help!"
NOT_OPEN = "This task is not open for labeling right now."
COME_BACK_LATER = "Come back later: the researcher has paused it and may open it again."
NOT_OPEN_YET = "This task is not open for labeling yet."
COME_BACK_WHEN_OPEN = "Come back later: it opens once the researcher has prepared it."


def units_unfinished(campaign: Campaign, worker: "Worker | None" = None):
    """The units that still lack judgments, less those `worker` was given (None: a worker
    new to the task): while there are some, a claim may succeed now or once other workers'
    leases end; without any, this worker gets no more work here."""
    units = LabelingUnit.objects.filter(campaign=campaign, completed__lt=F("judgments_needed"))
    if worker is not None:
        seen = Round.objects.filter(worker=worker, unit__isnull=False).values("unit_id")
        units = units.exclude(id__in=seen)
    return units


def no_work_for_a_new_worker(campaign: Campaign) -> NoWorkLeft | None:
    """Why `assignment_start` would give a worker new to this task nothing (the task is
    finished, paused or not open yet, or every unit has all its judgments), to say before
    they start rather than after a click on Start; None while there may be work. A paused
    task says it may open again."""
    if campaign.status != CampaignStatus.LABELING:
        return _not_open(campaign)
    if not units_unfinished(campaign).exists():
        return NoWorkLeft(NO_WORK_LEFT, come_back=NO_NEED)
    return None


def _no_work_left(campaign: Campaign, worker: "Worker", now: datetime) -> NoWorkLeft:
    """Why no unit was claimed, and whether some may come back: units that other workers
    hold return to the pool when their lease ends without a submission."""
    if not units_unfinished(campaign, worker).exists():
        return NoWorkLeft(NO_WORK_LEFT, come_back=NO_NEED)
    return NoWorkLeft(ALL_TAKEN, come_back=rounds_come_back(campaign, now))


def rounds_come_back(campaign: Campaign, now: datetime) -> str:
    """When rounds that other workers hold may come back, in one sentence: when the first
    of their leases ends (units return to the pool unsubmitted), else a whole lease."""
    lease_end = (
        Assignment.objects.filter(campaign=campaign, state=AssignmentState.ACTIVE)
        .order_by("lease_expires_at")
        .values_list("lease_expires_at", flat=True)
        .first()
    )
    minutes = campaign.lease_minutes
    if lease_end is not None:
        minutes = max(1, math.ceil((lease_end - now).total_seconds() / 60))
    return (
        f"If some of them stop, their rounds come back: try again in about {minutes} "
        f"minute{'s' if minutes != 1 else ''}."
    )


def _not_open(campaign: Campaign) -> NoWorkLeft:
    if campaign.status == CampaignStatus.FINISHED:
        return NoWorkLeft(FINISHED, come_back=NO_NEED)
    if campaign.status == CampaignStatus.PAUSED:
        return NoWorkLeft(NOT_OPEN, come_back=COME_BACK_LATER)
    return NoWorkLeft(NOT_OPEN_YET, come_back=COME_BACK_WHEN_OPEN)


def _lease_end(campaign: Campaign, now: datetime) -> datetime:
    return now + timedelta(minutes=campaign.lease_minutes)


def _locked(queryset):
    """Row locks that skip rows another transaction holds (no-op where unsupported)."""
    if connection.features.has_select_for_update_skip_locked:
        return queryset.select_for_update(skip_locked=True)
    return queryset


def units_claim(*, campaign: Campaign, worker: "Worker", count: int) -> list[int]:
    """Claim up to `count` open units this worker has never seen; best priority first.

    Must run inside a transaction. Rows another claimer holds are skipped, never
    waited for (waiting while holding our own locks could deadlock); when that leaves
    us short while open units remain, we try again a moment later, after the other
    transaction has committed. The conditional UPDATE makes overbooking impossible
    even without row locks (SQLite), and the database's `claims <= judgments_needed`
    check backs both.
    """
    seen = Round.objects.filter(worker=worker, unit__isnull=False).values("unit_id")
    open_units = (
        LabelingUnit.objects.filter(campaign=campaign, claims__lt=F("judgments_needed"))
        .exclude(id__in=seen)
        .order_by("-priority", "id")
    )
    claimed: list[int] = []
    give_up_at = time.monotonic() + CLAIM_PATIENCE_SECONDS
    for attempt in itertools.count(1):
        wanted = count - len(claimed)
        # Lock only as many rows as needed: every extra lock starves another claimer.
        batch = _locked(open_units.exclude(id__in=claimed)).values_list("id", flat=True)
        for unit_id in batch[:wanted]:
            updated = LabelingUnit.objects.filter(
                id=unit_id, claims__lt=F("judgments_needed")
            ).update(claims=F("claims") + 1)
            if updated:
                claimed.append(unit_id)
                if len(claimed) == count:
                    return claimed
        if time.monotonic() > give_up_at or not open_units.exclude(id__in=claimed).exists():
            break  # nothing left that others hold either, or they held it too long
        time.sleep(min(CLAIM_RETRY_SECONDS * attempt, 0.2))
    return claimed


def _gold_rounds_for(campaign: Campaign, worker: "Worker", kind: str, count: int, rng) -> list[int]:
    pool = GoldRound.objects.filter(campaign=campaign, kind=kind, is_active=True)
    if kind == GoldKind.GOLD:
        # A worker never sees a hidden gold round twice (database constraint too).
        pool = pool.exclude(rounds__worker=worker, rounds__kind=RoundKind.GOLD)
    ids = list(pool.values_list("id", flat=True))
    return rng.sample(ids, min(count, len(ids)))


def _plan_body(unit_ids: list[int], gold_ids: list[int], rng) -> list[tuple[str, int]]:
    """Real rounds in claim order, each gold round inserted at a random place among the
    first half of them (rounded up), so the worker's verdict comes before they have done
    half the work. The trade-off: the last rounds are never gold, which a worker could
    learn over many assignments; within the first half, gold is placed uniformly, and a
    gold round reads like any other (quality.md §4)."""
    body: list[tuple[str, int]] = [(RoundKind.REAL, unit_id) for unit_id in unit_ids]
    early = (len(unit_ids) + 1) // 2
    for gold_id in gold_ids:
        body.insert(rng.randint(0, early), (RoundKind.GOLD, gold_id))
        early += 1  # a later gold round may land before or after an earlier one
    return body


def assignment_active_for(*, campaign: Campaign, worker: "Worker") -> Assignment | None:
    return Assignment.objects.filter(
        campaign=campaign, worker=worker, state=AssignmentState.ACTIVE
    ).first()


def assignment_start(
    *,
    campaign: Campaign,
    worker: "Worker",
    platform_assignment_id: str = "",
    platform_task_id: str = "",
    now: datetime | None = None,
    rng: random.Random | None = None,
) -> Assignment:
    """The worker's active assignment in this campaign, or a new one with units claimed.

    A new assignment is: the training round(s), then the real rounds with the hidden
    gold rounds at random positions in their first half (`_plan_body`).
    """
    now = now or timezone.now()
    rng = rng or random.SystemRandom()
    # 1. A worker coming back (reload, other device, the same platform session) resumes.
    assignments_expire(campaign=campaign, now=now)
    existing = assignment_active_for(campaign=campaign, worker=worker)
    if existing is not None:
        if platform_assignment_id and existing.platform_assignment_id != platform_assignment_id:
            # Never hand one session's work to another: a worker id proves nothing.
            raise AssignmentInFlight(
                "This task is already in progress in another session of your worker account."
            )
        return existing
    if platform_assignment_id:
        previous = Assignment.objects.filter(
            campaign=campaign, platform_assignment_id=platform_assignment_id
        ).first()
        if previous is not None:
            raise Conflict(
                "This platform assignment was already used "
                f"({previous.get_state_display().lower()}). Accept a new one to go on."
            )
    if campaign.status != CampaignStatus.LABELING:
        raise _not_open(campaign)
    # E.g. a worker the quality filters removed gets no more work here (quality.md §4).
    run_checks(admission_checks, worker=worker, campaign=campaign)

    with transaction.atomic():
        # 2. Units first: without any, there is no assignment.
        unit_ids = units_claim(
            campaign=campaign, worker=worker, count=campaign.rounds_per_assignment
        )
        if not unit_ids:
            raise _no_work_left(campaign, worker, now)
        gold_ids = _gold_rounds_for(
            campaign, worker, GoldKind.GOLD, campaign.gold_rounds_per_assignment, rng
        )
        training_ids = _gold_rounds_for(
            campaign, worker, GoldKind.TRAINING, campaign.training_rounds, rng
        )
        assignment = Assignment.objects.create(
            campaign=campaign,
            worker=worker,
            platform_assignment_id=platform_assignment_id,
            platform_task_id=platform_task_id,
            token_nonce=new_nonce(),
            lease_expires_at=_lease_end(campaign, now),
        )
        # 3. The plan: training first, then real rounds with gold ones mixed in.
        body = _plan_body(unit_ids, gold_ids, rng)
        plan = [(RoundKind.TRAINING, gold_id) for gold_id in training_ids] + body
        Round.objects.bulk_create(
            Round(
                assignment=assignment,
                worker=worker,
                kind=kind,
                position=position,
                unit_id=source if kind == RoundKind.REAL else None,
                gold_round_id=None if kind == RoundKind.REAL else source,
            )
            for position, (kind, source) in enumerate(plan, start=1)
        )
    return assignment


def _release_unsubmitted_units(assignment: Assignment) -> int:
    unit_ids = list(
        assignment.rounds.filter(kind=RoundKind.REAL, submitted_at__isnull=True).values_list(
            "unit_id", flat=True
        )
    )
    # A worker holds a unit at most once, so one claim per unit comes back. One row at
    # a time in id order: two expiries that share units then lock them in the same
    # order and cannot deadlock.
    return sum(
        LabelingUnit.objects.filter(id=unit_id).update(claims=F("claims") - 1)
        for unit_id in sorted(unit_ids)
    )


def assignment_finish_early(*, assignment_id: int, now: datetime | None = None) -> int:
    """Withdraw the rounds of an assignment in progress that were not shown yet (the
    quality filters removed its worker); their units go back to the pool. When nothing
    is left to submit, the assignment ends as submitted. Returns the rounds withdrawn."""
    now = now or timezone.now()
    with transaction.atomic():
        assignment = (
            Assignment.objects.select_for_update()
            .filter(id=assignment_id, state=AssignmentState.ACTIVE)
            .first()
        )
        if assignment is None:
            return 0
        unshown = assignment.rounds.filter(served_at__isnull=True, submitted_at__isnull=True)
        unit_ids = sorted(unshown.filter(kind=RoundKind.REAL).values_list("unit_id", flat=True))
        _, deleted = unshown.delete()
        withdrawn = deleted.get(Round._meta.label, 0)
        for unit_id in unit_ids:  # in id order, as expiries release them
            LabelingUnit.objects.filter(id=unit_id).update(claims=F("claims") - 1)
        if withdrawn:
            # The completion page says so (never why: that is the quality verdict).
            assignment.ended_early = True
            assignment.save(update_fields=["ended_early"])
        if not assignment.rounds.filter(submitted_at__isnull=True).exists():
            assignment.state = AssignmentState.SUBMITTED
            assignment.submitted_at = now
            assignment.completion_code = completion_code()
            assignment.save(update_fields=["state", "submitted_at", "completion_code"])
            assignment_ended.send(sender=Assignment, assignment_id=assignment.id)
    return withdrawn


def assignment_expire(*, assignment_id: int, now: datetime | None = None) -> bool:
    """Expire one assignment whose lease has run out; its unsubmitted units go back."""
    now = now or timezone.now()
    with transaction.atomic():
        assignment = (
            Assignment.objects.select_for_update()
            .filter(id=assignment_id, state=AssignmentState.ACTIVE, lease_expires_at__lt=now)
            .first()
        )
        if assignment is None:
            return False  # submitted or touched since; nothing to do
        _release_unsubmitted_units(assignment)
        assignment.state = AssignmentState.EXPIRED
        assignment.save(update_fields=["state"])
        # Its submitted rounds still count.
        assignment_ended.send(sender=Assignment, assignment_id=assignment.id)
    return True


def assignments_expire(*, campaign: Campaign | None = None, now: datetime | None = None) -> int:
    """Expire every assignment past its lease (in one campaign, or all); returns how many."""
    now = now or timezone.now()
    stale = Assignment.objects.filter(state=AssignmentState.ACTIVE, lease_expires_at__lt=now)
    if campaign is not None:
        stale = stale.filter(campaign=campaign)
    return sum(
        assignment_expire(assignment_id=assignment_id, now=now)
        for assignment_id in stale.values_list("id", flat=True)
    )


def assignment_return(*, assignment: Assignment) -> None:
    """The worker gives the assignment back (MTurk "Return"): its open units go back now."""
    with transaction.atomic():
        locked = Assignment.objects.select_for_update().get(id=assignment.id)
        if locked.state != AssignmentState.ACTIVE:
            raise Conflict("Only an assignment in progress can be returned.")
        _release_unsubmitted_units(locked)
        locked.state = AssignmentState.RETURNED
        locked.save(update_fields=["state"])
        assignment_ended.send(sender=Assignment, assignment_id=locked.id)


class LeaseLapsed(Exception):
    """The assignment is still marked active but its lease ran out: expire it first."""


def assignment_lock(*, assignment: Assignment, now: datetime) -> Assignment:
    """Lock a worker's assignment for a write and renew its lease; returns it locked.

    Must run inside a transaction. The usual case is one statement: the UPDATE that
    renews an active, unexpired lease also takes the row lock, and `assignment` (read
    in this request, with its campaign) stands for the row. Otherwise the row is
    locked and read again: a submitted, expired or returned assignment comes back as
    it is, for the caller to answer replays or refuse; one whose lease ran out raises
    `LeaseLapsed`, so that the caller expires it outside this transaction (returned
    units stay returned even when the request then fails) and tries again. An
    assignment expires only after `lease_minutes` without any request from its worker.
    """
    lease_end = _lease_end(assignment.campaign, now)
    renewed = Assignment.objects.filter(
        id=assignment.id, state=AssignmentState.ACTIVE, lease_expires_at__gte=now
    ).update(lease_expires_at=lease_end, last_seen_at=now)
    if renewed:
        assignment.state = AssignmentState.ACTIVE
        assignment.lease_expires_at, assignment.last_seen_at = lease_end, now
        return assignment
    locked = (
        Assignment.objects.select_for_update(of=("self",))
        .select_related("campaign", "worker")
        .get(id=assignment.id)
    )
    if locked.state == AssignmentState.ACTIVE:
        raise LeaseLapsed
    return locked


class AssignmentExpired(Expired):
    """The assignment's lease ran out; the worker pages add what to do next on their
    platform (a platform still holds the task the worker accepted)."""


def expired_message(assignment: Assignment) -> str:
    # "Recorded", not "kept" or "paid": whether the worker is paid is the platform's call.
    return (
        f"This assignment expired after {assignment.campaign.lease_minutes} minutes without "
        "activity, and its open rounds went to other workers. The rounds you submitted are "
        "recorded."
    )


def raise_if_expired(assignment: Assignment) -> None:
    if assignment.state == AssignmentState.EXPIRED:
        raise AssignmentExpired(expired_message(assignment))
    if assignment.state == AssignmentState.RETURNED:
        # A block ends work in progress the same way; the worker is told which it was.
        run_checks(return_explanations, worker=assignment.worker, campaign=assignment.campaign)
        raise Expired("You returned this assignment. Start a new one from the task link.")


def completion_code() -> str:
    return secrets.token_hex(4).upper()
