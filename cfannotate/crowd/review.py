"""Review decisions carried out on the worker's platform: approve, reject, bonus, block.

The contract with quality control: QC decides (with a reason) and calls these four
functions with keyword arguments only. Each dispatches to the worker's platform
provider, which first checks with the platform's API that the assignment is the one
bound at entry (worker, HIT or study, completion code) and only then acts. Every call
is logged as a `PlatformAction`, written before the platform is asked and finished
after, and every refusal, failed check or unreachable platform raises a
`CfannotateError` subclass (`PlatformError`, `NotVerified`, `Conflict`, `InvalidInput`)
whose message says what happened. Invitation-link workers have no platform: decisions
are recorded here only (outcome "local"). Repeating a decision that is already in place
does nothing; `worker_bonus` pays at most once per `unique_token`.

A block has a scope (`BlockScope`). A researcher's block (their campaigns, or one) is
recorded here only: MTurk's `CreateWorkerBlock` and Prolific's blocklist group act for
the whole requester account, that is for every researcher on this site. Only an
administrator's block (`EVERYWHERE`) is also sent to the platform.
"""

from datetime import timedelta
from decimal import Decimal, InvalidOperation

from django.conf import settings
from django.db import IntegrityError
from django.utils import timezone

from cfannotate.campaigns.models import Campaign
from cfannotate.core.exceptions import CfannotateError, Conflict, InvalidInput
from cfannotate.crowd.blocks import worker_blocked_in_scope
from cfannotate.crowd.models import (
    ActionKind,
    ActionOutcome,
    BlockScope,
    Platform,
    PlatformAction,
    ReviewDecision,
    Worker,
)
from cfannotate.crowd.platform_calls import platform_call
from cfannotate.crowd.providers import provider_for
from cfannotate.crowd.providers.base import ActionResult, PlatformError
from cfannotate.crowd.services import (
    assignment_review_record,
    platform_action_begin,
    platform_action_finish,
    worker_block_local,
)
from cfannotate.labeling.models import Assignment, AssignmentState

MAX_MESSAGE = 1024  # MTurk's limit on RequesterFeedback and bonus reasons
MAX_TOKEN = 64  # MTurk's limit on UniqueRequestToken
# A bonus action left pending this long was interrupted (a crash between the call and
# its answer); the next try with the same token checks with the platform first.
STALE_PENDING = timedelta(minutes=10)

__all__ = ["assignment_approve", "assignment_reject", "worker_block", "worker_bonus"]


def _message(text: str, *, field: str, required: bool) -> str:
    text = (text or "").strip()
    if required and not text:
        raise InvalidInput(f"A {field} is required.", fields={field: ["Required."]})
    if len(text) > MAX_MESSAGE:
        raise InvalidInput(
            f"The {field} is at most {MAX_MESSAGE} characters.", fields={field: ["Too long."]}
        )
    return text


def _run(action: PlatformAction, ask) -> ActionResult:
    """Ask the platform, then finish the logged action with what it answered."""
    with platform_call(
        action, fix="Check the assignment on the platform before trying again."
    ) as call:
        return call.answered(ask())


def _begin(assignment: Assignment, action: str, **fields) -> PlatformAction:
    return platform_action_begin(
        platform=assignment.worker.platform,
        action=action,
        campaign=assignment.campaign,
        assignment=assignment,
        worker=assignment.worker,
        **fields,
    )


def _current_decision(assignment: Assignment) -> str | None:
    review = getattr(assignment, "review", None)
    return review.decision if review is not None else None


def review_actions(assignment: Assignment) -> frozenset[str]:
    """The review buttons `crowd.review` carries out on a submitted assignment, by its
    decision: approve until approved (MTurk lets an approval override a rejection, Prolific
    does not); reject until decided (an approval cannot be undone, and a second rejection
    does nothing); a bonus and a block whatever the decision. The page offers these."""
    decision = _current_decision(assignment)
    actions = {"bonus", "block"}
    if decision is None:
        actions |= {"approve", "reject"}
    elif decision == ReviewDecision.REJECTED and assignment.worker.platform != Platform.PROLIFIC:
        actions.add("approve")
    return frozenset(actions)


def assignment_approve(*, assignment: Assignment, feedback: str = "") -> None:
    """Approve (and so pay) a submitted assignment, after the platform confirms it."""
    feedback = _message(feedback, field="feedback", required=False)
    assignment = _fresh(assignment)
    if assignment.state != AssignmentState.SUBMITTED:
        raise Conflict(
            f"Assignment {assignment.id} is {assignment.get_state_display().lower()}: "
            "only submitted work can be approved."
        )
    if _current_decision(assignment) == ReviewDecision.APPROVED:
        return
    provider = provider_for(assignment.worker.platform)
    action = _begin(assignment, ActionKind.APPROVE, message=feedback)
    _run(action, lambda: provider.approve(assignment=assignment, feedback=feedback))
    assignment_review_record(
        assignment=assignment, decision=ReviewDecision.APPROVED, feedback=feedback
    )


def assignment_reject(*, assignment: Assignment, feedback: str) -> None:
    """Reject an assignment with feedback the worker reads; an approval cannot be undone."""
    feedback = _message(feedback, field="feedback", required=True)
    assignment = _fresh(assignment)
    decision = _current_decision(assignment)
    if decision == ReviewDecision.REJECTED:
        return
    if decision == ReviewDecision.APPROVED:
        raise Conflict(
            f"Assignment {assignment.id} is already approved; an approval cannot be undone."
        )
    if assignment.state == AssignmentState.ACTIVE:
        raise Conflict(f"Assignment {assignment.id} is still in progress; wait for it to end.")
    provider = provider_for(assignment.worker.platform)
    action = _begin(assignment, ActionKind.REJECT, message=feedback)
    _run(action, lambda: provider.reject(assignment=assignment, feedback=feedback))
    assignment_review_record(
        assignment=assignment, decision=ReviewDecision.REJECTED, feedback=feedback
    )


def _bonus_amount(amount) -> Decimal:
    try:
        amount = Decimal(str(amount))
    except (InvalidOperation, ValueError):
        amount = Decimal("NaN")
    maximum = Decimal(settings.CROWD_MAX_BONUS)
    if not amount.is_finite() or amount != amount.quantize(Decimal("0.01")):
        raise InvalidInput(
            "A bonus is an amount with at most two decimals, e.g. 0.50.",
            fields={"amount": ["Not an amount."]},
        )
    if not Decimal("0.01") <= amount <= maximum:
        raise InvalidInput(
            f"A bonus is between 0.01 and {maximum} (CFANNOTATE_MAX_BONUS).",
            fields={"amount": ["Out of range."]},
        )
    return amount


def worker_bonus(
    *, assignment: Assignment, amount: Decimal, reason: str, unique_token: str
) -> None:
    """Pay a bonus on an assignment, once per `unique_token` however often it is called.

    The token is held by a database constraint (one pending or finished action per
    token), so two concurrent calls cannot both pay. A token whose earlier try failed
    or was interrupted may be tried again; the provider then first asks the platform
    whether that try went through after all.
    """
    amount = _bonus_amount(amount)
    reason = _message(reason, field="reason", required=True)
    unique_token = (unique_token or "").strip()
    if not unique_token or len(unique_token) > MAX_TOKEN or not unique_token.isprintable():
        raise InvalidInput(
            f"A bonus needs a unique token of 1 to {MAX_TOKEN} printable characters.",
            fields={"unique_token": ["Required, at most 64 characters."]},
        )
    assignment = _fresh(assignment)
    platform = assignment.worker.platform
    same_token = PlatformAction.objects.filter(
        platform=platform, action=ActionKind.BONUS, request_token=unique_token
    )
    earlier = same_token.exclude(outcome=ActionOutcome.FAILED).first()
    if earlier is not None:
        if earlier.outcome == ActionOutcome.PENDING:
            if timezone.now() - earlier.created_at < STALE_PENDING:
                raise Conflict("A bonus with this token is being paid right now.")
            platform_action_finish(
                action=earlier,
                outcome=ActionOutcome.FAILED,
                error="Interrupted before the platform answered.",
            )
        elif earlier.assignment_id == assignment.id and earlier.amount == amount:
            return  # paid already: the same request again
        else:
            raise Conflict(
                "This bonus token was already used for another bonus "
                f"(assignment {earlier.assignment_id}, {earlier.amount})."
            )
    if assignment.state != AssignmentState.SUBMITTED:
        raise Conflict(
            f"Assignment {assignment.id} is {assignment.get_state_display().lower()}: "
            "a bonus is paid on submitted work."
        )
    known_payments = None
    if same_token.exists():
        # An earlier try may have gone through: count the bonuses of this amount that we
        # know were paid on this assignment; the platform may list one more.
        known_payments = PlatformAction.objects.filter(
            assignment=assignment,
            action=ActionKind.BONUS,
            amount=amount,
            outcome=ActionOutcome.SUCCEEDED,
        ).count()
    try:
        action = _begin(
            assignment, ActionKind.BONUS, request_token=unique_token, amount=amount, message=reason
        )
    except IntegrityError:
        raise Conflict("A bonus with this token is being paid right now.") from None
    provider = provider_for(platform)
    _run(
        action,
        lambda: provider.bonus(
            assignment=assignment,
            amount=amount,
            reason=reason,
            unique_token=unique_token,
            known_payments=known_payments,
        ),
    )


def worker_block(
    *,
    worker: Worker,
    reason: str,
    scope: str,
    campaign: Campaign | None = None,
    by=None,
) -> None:
    """Block a worker: no new assignments in the scope, and their work in progress there ends.

    `scope`: `BlockScope.RESEARCHER` (every campaign of `campaign`'s owner) or
    `CAMPAIGN` (that campaign), recorded here only; `EVERYWHERE`, an administrator's
    block, also on the worker's platform.
    """
    reason = _message(reason, field="reason", required=True)
    if scope != BlockScope.EVERYWHERE:
        if worker_blocked_in_scope(worker=worker, scope=scope, campaign=campaign):
            return
        worker_block_local(worker=worker, reason=reason, scope=scope, campaign=campaign, by=by)
        platform_action_finish(
            action=platform_action_begin(
                platform=worker.platform,
                action=ActionKind.BLOCK,
                campaign=campaign,
                worker=worker,
                message=reason,
            ),
            outcome=ActionOutcome.LOCAL,
            response={"scope": scope},
        )
        return
    worker_block_local(worker=worker, reason=reason, scope=scope, by=by)
    # Administrators' blocks are the ones logged without a campaign.
    done = PlatformAction.objects.filter(
        worker=worker,
        action=ActionKind.BLOCK,
        campaign__isnull=True,
        outcome__in=[ActionOutcome.SUCCEEDED, ActionOutcome.LOCAL],
    )
    if done.exists():
        return
    provider = provider_for(worker.platform)
    action = platform_action_begin(
        platform=worker.platform, action=ActionKind.BLOCK, worker=worker, message=reason
    )
    try:
        _run(action, lambda: provider.block(worker=worker, reason=reason))
    except CfannotateError as error:
        raise PlatformError(f"Blocked here, but not on the platform: {error.message}") from None


def _fresh(assignment: Assignment) -> Assignment:
    """The assignment as it is now, with its worker, campaign and review."""
    return (
        Assignment.objects.select_related("worker", "campaign", "review")
        .filter(pk=assignment.pk)
        .first()
        or assignment
    )
