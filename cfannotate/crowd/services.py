"""Writes on workers and platforms: register workers, bind entries to assignments, invitation
links with quotas, personal links, review decisions, blocking, and the log of platform
actions."""

import re
from datetime import datetime, timedelta

from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from cfannotate.campaigns.models import Campaign
from cfannotate.core.exceptions import Conflict, Expired, Forbidden, InvalidInput
from cfannotate.core.text import counted
from cfannotate.core.worker_tokens import (
    BAD_LINK,
    new_nonce,
    personal_link_token_read,
    resume_code_matches,
    resume_code_parse,
)
from cfannotate.crowd.blocks import WorkerBlocked, raise_if_blocked
from cfannotate.crowd.models import (
    ActionOutcome,
    AssignmentReview,
    BlockScope,
    InvitationLink,
    PersonalLink,
    Platform,
    PlatformAction,
    Worker,
    WorkerBlock,
    WorkerStatus,
)
from cfannotate.labeling.assignments import (
    AssignmentInFlight,
    assignment_return,
    assignment_start,
    assignments_expire,
    raise_if_expired,
)
from cfannotate.labeling.models import Assignment, AssignmentState

MAX_EXTERNAL_ID = 200
MAX_LINK_QUOTA = 100_000
# Anonymous invitation-link workers get `link-` and a random id (`views._join`); the
# prefix is theirs alone, so no personal link can name one of them.
ANONYMOUS_PREFIX = "link-"
ANONYMOUS_ID = re.compile(r"^link-[A-Za-z0-9_-]{16}$")
PERSONAL_LINK_DAYS = 30
WRONG_RESUME_CODE = (
    "No task of yours has this code here. Check it (it looks like 12-ABCDE23456) "
    "and that you are on the task's own page."
)
MAX_PERSONAL_LINK_DAYS = 365


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
        raise WorkerBlocked(BlockScope.EVERYWHERE)
    return worker


# --- Entry -----------------------------------------------------------------------------------


def assignment_enter(
    *, campaign: Campaign, worker: Worker, platform_assignment_id: str, platform_task_id: str
) -> Assignment:
    """The assignment bound to a platform's session (MTurk assignmentId, Prolific SESSION_ID).

    1. The session was seen before: the same worker on the same HIT or study resumes it
       (a reload, or MTurk re-opening the HIT); anyone else is refused.
    2. The worker has work in progress under another session: refused with
       `SessionInFlight`. A worker id proves nothing (anyone can type one into the
       URL), so work never moves from one session to another.
    3. Otherwise a new assignment starts, bound to these ids.
    """
    ids = {"platform_assignment_id": platform_assignment_id, "platform_task_id": platform_task_id}
    assignments_expire(campaign=campaign)
    found = _bound_assignment(campaign=campaign, worker=worker, **ids)
    if found is not None:
        # The same session: its work in progress (a block ended any in its scope), or the
        # completion page of work already submitted, which must still reach the platform.
        return found
    raise_if_blocked(worker=worker, campaign=campaign)
    try:
        return assignment_start(campaign=campaign, worker=worker, **ids)
    except IntegrityError:
        # A second request started an assignment a moment ago: with the same ids (a
        # double load) it is resumed; with other ids it is a second session, refused.
        found = _bound_assignment(campaign=campaign, worker=worker, **ids)
        if found is None:
            raise Conflict("This task was opened twice at once. Reload the page.") from None
        return found
    except AssignmentInFlight:
        raise SessionInFlight(worker.platform, campaign) from None


class SessionInFlight(AssignmentInFlight):
    """The worker's assignment in this campaign belongs to another platform session."""

    title = "This task is open in another session"

    def __init__(self, platform: str, campaign: Campaign) -> None:
        session = {
            Platform.MTURK: "another MTurk assignment (another HIT you accepted)",
            Platform.PROLIFIC: "another Prolific session",
        }.get(platform, "another session")
        super().__init__(
            f"Your worker account already has this task in progress in {session}. Work "
            "never moves from one session to another, so finish it in the session where "
            "you started it. If you returned that one, this one can start once the work "
            f"is released: after {counted(campaign.lease_minutes, 'minute')} without activity, or "
            "sooner when the researcher syncs with the platform. If you never started "
            "this task, someone else used your worker id: contact the researcher."
        )


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
        if locked.filter(campaign=campaign, worker=worker, state=AssignmentState.ACTIVE).exists():
            raise SessionInFlight(worker.platform, campaign)
        return None


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
        raise_if_blocked(worker=worker, campaign=campaign)
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
            with_room = InvitationLink.objects.filter(pk=link.pk)
            if link.quota is not None:
                with_room = with_room.filter(uses__lt=F("quota"))
            if not with_room.update(uses=F("uses") + 1):
                raise Conflict(
                    "This invitation link is used up: it was for "
                    f"{counted(link.quota or 0, 'assignment')}."
                )
        # A failure here (no work left) rolls the use back with everything else.
        return assignment_start(campaign=campaign, worker=worker)


# --- Personal links ----------------------------------------------------------------------------


def personal_link_create(
    *, campaign: Campaign, worker_name: str, days: int = PERSONAL_LINK_DAYS, created_by=None
) -> PersonalLink:
    """A personal link for the worker called `worker_name`, valid for `days` days.

    The name becomes the worker's id (a worker who entered under that name before
    resumes their work). A worker has one live personal link per campaign: a new one
    replaces the old, which is revoked.
    """
    worker_name = (worker_name or "").strip()
    if worker_name.startswith(ANONYMOUS_PREFIX):
        raise InvalidInput(
            f"Names starting with {ANONYMOUS_PREFIX!r} are kept for anonymous workers.",
            fields={"worker": ["Reserved prefix."]},
        )
    if not isinstance(days, int) or not 1 <= days <= MAX_PERSONAL_LINK_DAYS:
        raise InvalidInput(
            f"A personal link is valid for 1 to {MAX_PERSONAL_LINK_DAYS} days.",
            fields={"days": ["Out of range."]},
        )
    with transaction.atomic():
        worker = worker_get_or_create(platform=Platform.LINK, external_id=worker_name)
        for old in PersonalLink.objects.filter(
            campaign=campaign, worker=worker, revoked_at__isnull=True
        ):
            personal_link_revoke(link=old)
        now = timezone.now()
        link = PersonalLink(
            campaign=campaign,
            worker=worker,
            expires_at=now + timedelta(days=days),
            created_by=created_by,
        )
        link.full_clean(exclude=["created_by", "created_at"])
        link.save()
    return link


def personal_link_revoke(*, link: PersonalLink) -> bool:
    """Revoke a personal link: its token stops working, and so do the worker pages it opened.

    The worker's assignment in progress stays theirs (a new personal link resumes it),
    but its page token is rotated, so whoever holds the old pages' addresses is out.
    Returns False when the link was revoked already.
    """
    with transaction.atomic():
        revoked = PersonalLink.objects.filter(pk=link.pk, revoked_at__isnull=True).update(
            revoked_at=timezone.now()
        )
        if revoked:
            active = Assignment.objects.select_for_update().filter(
                campaign_id=link.campaign_id, worker_id=link.worker_id, state=AssignmentState.ACTIVE
            )
            for assignment in active:
                assignment.token_nonce = new_nonce()
                assignment.save(update_fields=["token_nonce"])
    link.refresh_from_db(fields=["revoked_at"])
    return bool(revoked)


class PersonalLinkRevoked(Forbidden):
    title = "This personal link was withdrawn"


class PersonalLinkExpired(Expired):
    title = "This personal link has expired"


def personal_link_read(token: str, *, now: datetime | None = None) -> PersonalLink:
    """The personal link a token names, if it still works; a clear refusal otherwise.

    The signature proves we made the token; the database says whether the link is still
    live (revocation) and until when (expiry, also in the token).
    """
    claim = personal_link_token_read(token)
    link = (
        PersonalLink.objects.select_related("campaign", "worker")
        .filter(id=claim.link_id, worker__external_id=claim.worker)
        .first()
    )
    if link is None:
        raise Forbidden(BAD_LINK)
    if link.revoked_at is not None:
        raise PersonalLinkRevoked(
            "The researcher withdrew this personal link. Ask them for a new one if you "
            "should still work on this task."
        )
    now = now or timezone.now()
    if now >= min(link.expires_at, claim.expires_at):
        raise PersonalLinkExpired(
            f"This personal link was valid until {link.expires_at:%Y-%m-%d %H:%M} UTC. "
            "Ask the researcher who sent it for a new one; work you saved is kept."
        )
    return link


def personal_link_enter(*, link: PersonalLink) -> Assignment:
    """Start or resume the named worker's assignment through their personal link."""
    with transaction.atomic():
        # Locked, so a revocation at this moment either comes first (refused) or waits
        # and then rotates the token of the assignment this entry hands out.
        live = (
            PersonalLink.objects.select_for_update()
            .filter(pk=link.pk, revoked_at__isnull=True, expires_at__gt=timezone.now())
            .values_list("id", flat=True)
            .first()
        )
        if live is None:
            raise PersonalLinkRevoked("This personal link no longer works. Ask for a new one.")
        return link_enter(campaign=link.campaign, worker=link.worker, link=None)


# --- Reviews and blocks ------------------------------------------------------------------------


def assignment_review_record(
    *, assignment: Assignment, decision: str, feedback: str = "", at: datetime | None = None
) -> AssignmentReview:
    review, _ = AssignmentReview.objects.update_or_create(
        assignment=assignment,
        defaults={"decision": decision, "feedback": feedback, "decided_at": at or timezone.now()},
    )
    return review


def worker_block_local(
    *,
    worker: Worker,
    reason: str,
    scope: str,
    campaign: Campaign | None = None,
    by=None,
) -> int:
    """Block the worker here: no new assignments in the scope, work in progress there ends.

    `scope` is `BlockScope.EVERYWHERE` (an administrator's block: every researcher's
    campaigns), `RESEARCHER` (every campaign of `campaign`'s owner) or `CAMPAIGN` (that
    campaign only). Returns how many assignments in progress were ended.
    """
    in_progress = Assignment.objects.filter(worker=worker, state=AssignmentState.ACTIVE)
    if scope == BlockScope.EVERYWHERE:
        Worker.objects.filter(pk=worker.pk).update(
            status=WorkerStatus.BLOCKED, blocked_reason=reason
        )
        worker.status, worker.blocked_reason = WorkerStatus.BLOCKED, reason
    elif scope in (BlockScope.RESEARCHER, BlockScope.CAMPAIGN):
        if campaign is None:
            raise InvalidInput(
                "A researcher's block names the campaign it was made from.",
                fields={"campaign": ["Required."]},
            )
        block_campaign = campaign if scope == BlockScope.CAMPAIGN else None
        try:
            with transaction.atomic():
                WorkerBlock.objects.create(
                    worker=worker,
                    scope=scope,
                    researcher_id=campaign.owner_id,
                    campaign=block_campaign,
                    reason=reason,
                    created_by=by,
                )
        except IntegrityError:
            pass  # the same block exists already: blocking twice changes nothing
        if scope == BlockScope.CAMPAIGN:
            in_progress = in_progress.filter(campaign=campaign)
        else:
            in_progress = in_progress.filter(campaign__owner_id=campaign.owner_id)
    else:
        raise InvalidInput(f"Unknown block scope {scope!r}.", fields={"scope": ["Unknown."]})
    ended = 0
    for assignment in in_progress:
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


def assignment_resume(*, campaign: Campaign, code: str) -> Assignment:
    """The anonymous link worker's assignment that a resume code names, in this campaign.

    InvalidInput (with the reason) for a wrong code, for a named or platform worker's
    assignment (they come back through their own link or platform), and for an
    assignment that has ended.
    """
    assignment_id = resume_code_parse(code or "")
    assignment = (
        Assignment.objects.select_related("worker", "campaign")
        .filter(id=assignment_id, campaign=campaign, worker__platform=Platform.LINK)
        .first()
        if assignment_id is not None
        else None
    )
    if (
        assignment is None
        or not ANONYMOUS_ID.match(assignment.worker.external_id)
        or not resume_code_matches(code, assignment.token_nonce)
    ):
        raise InvalidInput(WRONG_RESUME_CODE, fields={"code": ["Not a code for this task."]})
    try:
        raise_if_expired(assignment)
    except (Expired, WorkerBlocked) as ended:
        raise InvalidInput(ended.message, fields={"code": ["This task has ended."]}) from None
    return assignment
