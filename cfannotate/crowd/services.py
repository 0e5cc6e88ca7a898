"""Writes on workers and platforms: register workers, bind entries to assignments, invitation
links with quotas, review decisions, blocking, and the log of platform actions."""

from datetime import datetime

from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from cfannotate.campaigns.models import Campaign
from cfannotate.core.exceptions import Conflict, Forbidden, InvalidInput
from cfannotate.crowd.models import (
    ActionOutcome,
    AssignmentReview,
    InvitationLink,
    Platform,
    PlatformAction,
    Worker,
    WorkerStatus,
)
from cfannotate.labeling.assignments import (
    assignment_return,
    assignment_start,
    assignments_expire,
    raise_if_expired,
)
from cfannotate.labeling.models import Assignment, AssignmentState

MAX_EXTERNAL_ID = 200
MAX_LINK_QUOTA = 100_000


def worker_get_or_create(*, platform: str, external_id: str) -> Worker:
    """The worker with this platform id, registered on first sight; blocked workers refused."""
    external_id = (external_id or "").strip()
    if platform not in Platform.values:
        raise InvalidInput(f"Unknown platform {platform!r}.", fields={"platform": ["Unknown."]})
    if not external_id:
        raise InvalidInput("A worker id is required.", fields={"worker_id": ["Required."]})
    if len(external_id) > MAX_EXTERNAL_ID or not external_id.isprintable():
        raise InvalidInput(
            f"A worker id is at most {MAX_EXTERNAL_ID} printable characters.",
            fields={"worker_id": ["Too long or not printable."]},
        )
    worker = Worker.objects.filter(platform=platform, external_id=external_id).first()
    if worker is None:
        try:
            with transaction.atomic():
                worker = Worker.objects.create(platform=platform, external_id=external_id)
        except IntegrityError:
            # Another request registered the same worker a moment ago.
            worker = Worker.objects.get(platform=platform, external_id=external_id)
    if worker.status == WorkerStatus.BLOCKED:
        raise Forbidden("This worker account cannot take tasks in this project.")
    return worker


# --- Entry -----------------------------------------------------------------------------------


def assignment_enter(
    *, campaign: Campaign, worker: Worker, platform_assignment_id: str, platform_task_id: str
) -> Assignment:
    """The assignment for a platform's (worker, assignment id): resumed, re-bound or new.

    1. The platform assignment was seen before: the same worker resumes it (a reload, or
       MTurk re-opening the HIT); anyone else is refused.
    2. The worker has work in progress under another platform assignment (they returned
       the HIT and accepted another one): the work moves to the new platform assignment,
       whose submission is the one that will count.
    3. Otherwise a new assignment starts, bound to these ids.
    """
    ids = {"platform_assignment_id": platform_assignment_id, "platform_task_id": platform_task_id}
    assignments_expire(campaign=campaign)
    found = _bound_assignment(campaign=campaign, worker=worker, **ids)
    if found is not None:
        return found
    try:
        return assignment_start(campaign=campaign, worker=worker, **ids)
    except IntegrityError:
        # A second request with the same ids (a double load) started it a moment ago.
        found = _bound_assignment(campaign=campaign, worker=worker, **ids)
        if found is None:
            raise Conflict("This task was opened twice at once. Reload the page.") from None
        return found


def _bound_assignment(
    *, campaign: Campaign, worker: Worker, platform_assignment_id: str, platform_task_id: str
) -> Assignment | None:
    """Steps 1 and 2 of `assignment_enter`; None when a new assignment is needed."""
    with transaction.atomic():
        locked = Assignment.objects.select_for_update(of=("self",))
        previous = locked.filter(
            campaign=campaign, platform_assignment_id=platform_assignment_id
        ).first()
        if previous is not None:
            if previous.worker_id != worker.id or previous.platform_task_id != platform_task_id:
                raise Forbidden(
                    "This platform assignment belongs to another worker or task. "
                    "Open the task again from the platform."
                )
            raise_if_expired(previous)
            return previous
        active = locked.filter(
            campaign=campaign, worker=worker, state=AssignmentState.ACTIVE
        ).first()
        if active is not None:
            active.platform_assignment_id = platform_assignment_id
            active.platform_task_id = platform_task_id
            active.save(update_fields=["platform_assignment_id", "platform_task_id"])
        return active


# --- Invitation links --------------------------------------------------------------------------


def invitation_link_create(
    *, campaign: Campaign, name: str, quota: int | None = None
) -> InvitationLink:
    name = (name or "").strip()
    if not name:
        raise InvalidInput(
            "Give the link a name, e.g. who it is for.", fields={"name": ["Required."]}
        )
    if len(name) > 120:
        raise InvalidInput("A link name is at most 120 characters.", fields={"name": ["Too long."]})
    if quota is not None and not 1 <= quota <= MAX_LINK_QUOTA:
        raise InvalidInput(
            f"A quota is between 1 and {MAX_LINK_QUOTA} assignments, or empty for no limit.",
            fields={"quota": ["Out of range."]},
        )
    link = InvitationLink(campaign=campaign, name=name, quota=quota)
    link.full_clean()
    link.save()
    return link


def invitation_link_close(*, link: InvitationLink) -> None:
    """No new assignments through this link; assignments it started can be finished."""
    InvitationLink.objects.filter(pk=link.pk).update(is_active=False)
    link.is_active = False


def link_enter(*, campaign: Campaign, worker: Worker, link: InvitationLink | None) -> Assignment:
    """Start or resume the worker's assignment through the campaign's link or a named link.

    A named link counts the assignments it starts; the conditional UPDATE and the
    database's `uses <= quota` check mean a quota is never exceeded, even by two workers
    arriving at once. A worker resuming their assignment uses nothing.
    """
    assignments_expire(campaign=campaign)
    try:
        return _link_enter(campaign=campaign, worker=worker, link=link)
    except IntegrityError:
        # The same worker's other request (a double click) started it a moment ago; the
        # use this one counted was rolled back with it.
        active = Assignment.objects.filter(
            campaign=campaign, worker=worker, state=AssignmentState.ACTIVE
        ).first()
        if active is None:
            raise Conflict("This task was opened twice at once. Reload the page.") from None
        return active


def _link_enter(*, campaign: Campaign, worker: Worker, link: InvitationLink | None) -> Assignment:
    with transaction.atomic():
        if link is not None:
            link = InvitationLink.objects.select_for_update().get(pk=link.pk)
            if link.campaign_id != campaign.id or not link.is_active:
                raise Forbidden("This invitation link was closed by the researcher.")
        active = Assignment.objects.filter(
            campaign=campaign, worker=worker, state=AssignmentState.ACTIVE
        ).first()
        if active is not None:
            return active
        if link is not None:
            counted = InvitationLink.objects.filter(pk=link.pk)
            if link.quota is not None:
                counted = counted.filter(uses__lt=F("quota"))
            if not counted.update(uses=F("uses") + 1):
                raise Conflict(
                    f"This invitation link is used up: it was for {link.quota} assignments."
                )
        # A failure here (no work left) rolls the use back with everything else.
        return assignment_start(campaign=campaign, worker=worker)


# --- Reviews and blocks ------------------------------------------------------------------------


def assignment_review_record(
    *, assignment: Assignment, decision: str, feedback: str = "", at: datetime | None = None
) -> AssignmentReview:
    review, _ = AssignmentReview.objects.update_or_create(
        assignment=assignment,
        defaults={"decision": decision, "feedback": feedback, "decided_at": at or timezone.now()},
    )
    return review


def worker_block_local(*, worker: Worker, reason: str) -> int:
    """Block the worker here: no new assignments, and work in progress goes back to the pool.

    Returns how many assignments in progress were ended.
    """
    Worker.objects.filter(pk=worker.pk).update(status=WorkerStatus.BLOCKED, blocked_reason=reason)
    worker.status, worker.blocked_reason = WorkerStatus.BLOCKED, reason
    ended = 0
    for assignment in Assignment.objects.filter(worker=worker, state=AssignmentState.ACTIVE):
        try:
            assignment_return(assignment=assignment)
            ended += 1
        except Conflict:
            pass  # it ended on its own a moment ago
    return ended


# --- The platform action log -------------------------------------------------------------------


def platform_action_begin(*, platform: str, action: str, **fields) -> PlatformAction:
    """Write the action down before the platform is called (committed at once)."""
    with transaction.atomic():
        return PlatformAction.objects.create(platform=platform, action=action, **fields)


def platform_action_finish(
    *,
    action: PlatformAction,
    outcome: str,
    request_id: str = "",
    response: dict | None = None,
    error: str = "",
) -> PlatformAction:
    if outcome == ActionOutcome.PENDING:
        raise ValueError("An action is finished with a final outcome.")
    action.outcome = outcome
    action.request_id = (request_id or "")[:200]
    action.response = response or {}
    action.error = error
    action.finished_at = timezone.now()
    action.save(update_fields=["outcome", "request_id", "response", "error", "finished_at"])
    return action
