"""Worker decisions: proposed from the filters, decided by the researcher, sent to the platform.

The policy (see `quality.md`): a qualified worker's assignment is approved, with a
bonus when the campaign offers one and every gold counterfactual was right. A worker
who fails the filter but answered more than half the gold right is still paid (their
labels are simply not used): an honest slow reader should not be punished. A worker
at or below half the gold right, or who fails both the time and the distribution
filter, is proposed for rejection and a block. Researchers can change any proposal;
the filters never touch a decision a researcher changed.
"""

from collections.abc import Collection
from datetime import timedelta
from decimal import Decimal

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from cfannotate.campaigns.models import Campaign
from cfannotate.core.exceptions import CfannotateError, Conflict, InvalidInput
from cfannotate.crowd.models import BlockScope
from cfannotate.labeling.models import Assignment, AssignmentState
from cfannotate.quality.models import (
    DecisionAction,
    DecisionState,
    WorkerDecision,
    WorkerQuality,
)
from cfannotate.quality.rules import FilterSettings, filter_settings

SENDING_STALE = timedelta(minutes=10)


def proposed_actions(
    quality: WorkerQuality, *, settings: FilterSettings, bonus_amount: Decimal
) -> list[tuple[str, str, Decimal | None]]:
    """(action, reason, amount) for one submitted assignment of a worker with this verdict."""
    accuracy = quality.gold_accuracy
    gold = f"gold {quality.gold_correct}/{quality.gold_total}" if quality.gold_total else "no gold"
    median = f"median {quality.median_seconds:.0f} s" if quality.median_seconds else "no rounds"
    if quality.qualified:
        actions = [(DecisionAction.APPROVE, f"Passed quality control ({median}, {gold}).", None)]
        if bonus_amount > 0 and quality.gold_total and quality.gold_correct == quality.gold_total:
            actions.append(
                (DecisionAction.BONUS, f"Every gold counterfactual right ({gold}).", bonus_amount)
            )
        return actions
    failures = "; ".join(quality.reasons)
    if quality.held_until is not None:  # may still pass: paid, labels wait for more gold
        return [(DecisionAction.APPROVE, f"Paid; labels wait ({failures}).", None)]
    too_fast = (
        quality.median_seconds is not None and quality.median_seconds <= settings.min_median_seconds
    )
    skewed = (
        quality.distribution_distance is not None
        and quality.distribution_distance > settings.distribution_threshold
    )
    guessing = accuracy is not None and quality.gold_total >= 2 and accuracy <= 0.5
    careless = guessing or (too_fast and skewed)
    if careless:
        return [
            (DecisionAction.REJECT, f"Failed quality control: {failures}.", None),
            (DecisionAction.BLOCK, f"Failed quality control: {failures}.", None),
        ]
    return [
        (
            DecisionAction.APPROVE,
            f"Paid; labels not used ({failures}).",
            None,
        )
    ]


class _Proposals:
    """The decisions that exist for the assignments being proposed for, read in one query,
    and what proposing them changes: written at the end with one INSERT and one UPDATE."""

    def __init__(self, campaign: Campaign, assignments) -> None:
        self.campaign = campaign
        existing = WorkerDecision.objects.filter(
            Q(assignment__in=assignments)
            | Q(
                campaign=campaign,
                action=DecisionAction.BLOCK,
                worker_id__in=assignments.values("worker_id"),
            )
        )
        # One decision per key, as the database's unique constraints have it.
        self.by_key: dict[tuple, WorkerDecision] = {
            self._key(decision.action, decision.assignment_id, decision.worker_id): decision
            for decision in existing
        }
        self.created: list[WorkerDecision] = []
        self.changed: dict[int, WorkerDecision] = {}

    @staticmethod
    def _key(action: str, assignment_id: int | None, worker_id: int) -> tuple:
        if action == DecisionAction.BLOCK:
            return (DecisionAction.BLOCK, worker_id)
        if action == DecisionAction.BONUS:
            return (DecisionAction.BONUS, assignment_id)
        return ("payment", assignment_id)  # approve or reject: one of them per assignment

    def propose(self, *, assignment: Assignment, action, reason, amount) -> None:
        """Create or update a proposal unless the researcher already decided."""
        worker_id = assignment.worker_id
        key = self._key(action, assignment.id, worker_id)
        existing = self.by_key.get(key)
        if existing is None:
            decision = WorkerDecision(
                campaign=self.campaign,
                worker_id=worker_id,
                assignment=assignment if action != DecisionAction.BLOCK else None,
                action=action,
                amount=amount,
                reason=reason,
            )
            self.by_key[key] = decision  # a block proposed again for the worker's next one
            self.created.append(decision)
            return
        if existing.state != DecisionState.PROPOSED or not existing.proposed_by_filters:
            return
        if (existing.action, existing.reason, existing.amount) == (action, reason, amount):
            return
        existing.action, existing.reason, existing.amount = action, reason, amount
        if existing.pk is not None:
            self.changed[existing.pk] = existing

    def write(self) -> int:
        """Save what changed; returns the decisions created or updated."""
        WorkerDecision.objects.bulk_create(self.created)
        updated = 0
        if self.changed:
            now = timezone.now()  # bulk_update leaves auto_now fields alone
            for decision in self.changed.values():
                decision.updated_at = now
            # Still untouched by the researcher: a change they make meanwhile stays theirs.
            untouched = WorkerDecision.objects.filter(
                state=DecisionState.PROPOSED, proposed_by_filters=True
            )
            updated = untouched.bulk_update(
                self.changed.values(), ["action", "reason", "amount", "updated_at"]
            )
        return len(self.created) + updated

    def drop_stale(self, assignment_ids, wanted: set[tuple[int, str]]) -> None:
        """Drop untouched proposals the filters no longer make (a bonus or block gone away)."""
        stale = [
            decision.pk
            for decision in self.by_key.values()
            if decision.pk is not None
            and decision.campaign_id == self.campaign.id
            and decision.state == DecisionState.PROPOSED
            and decision.proposed_by_filters
            and (
                (
                    decision.action == DecisionAction.BONUS
                    and (decision.assignment_id, DecisionAction.BONUS) not in wanted
                )
                or (
                    decision.action == DecisionAction.BLOCK
                    and assignment_ids is None
                    and (decision.worker_id, DecisionAction.BLOCK) not in wanted
                )
            )
        ]
        if stale:
            WorkerDecision.objects.filter(
                id__in=stale, state=DecisionState.PROPOSED, proposed_by_filters=True
            ).delete()


@transaction.atomic
def decisions_propose(*, campaign: Campaign, assignment_ids: Collection[int] | None = None) -> int:
    """Propose decisions for submitted assignments (all, or these); returns how many changed.

    A handful of queries however many assignments: the decisions there are read at once
    and what changes is written with one INSERT and one UPDATE (batched on SQLite, which
    limits the parameters of a statement).
    """
    assignments = Assignment.objects.filter(campaign=campaign, state=AssignmentState.SUBMITTED)
    if assignment_ids is not None:
        assignments = assignments.filter(id__in=assignment_ids)
    qualities = {
        quality.worker_id: quality
        for quality in WorkerQuality.objects.filter(
            campaign=campaign, worker_id__in=assignments.values("worker_id")
        )
    }
    settings = filter_settings(campaign)
    proposals = _Proposals(campaign, assignments)
    wanted: set[tuple[int, str]] = set()
    for assignment in assignments.order_by("id"):
        quality = qualities.get(assignment.worker_id)
        if quality is None:
            continue
        for action, reason, amount in proposed_actions(
            quality, settings=settings, bonus_amount=campaign.bonus_amount
        ):
            target = assignment.worker_id if action == DecisionAction.BLOCK else assignment.id
            wanted.add((target, action))
            proposals.propose(assignment=assignment, action=action, reason=reason, amount=amount)
    changed = proposals.write()
    proposals.drop_stale(assignment_ids, wanted)
    return changed


# --- The researcher decides ----------------------------------------------------------------

ALLOWED_CHANGES = {
    DecisionAction.APPROVE: {DecisionAction.APPROVE, DecisionAction.REJECT},
    DecisionAction.REJECT: {DecisionAction.APPROVE, DecisionAction.REJECT},
    DecisionAction.BONUS: {DecisionAction.BONUS},
    DecisionAction.BLOCK: {DecisionAction.BLOCK},
}


def _bonus_amount_problem(amount: Decimal | None) -> str:
    """What is wrong with a bonus amount, or "": the field keeps dollars and cents, under a
    million (`max_digits=8, decimal_places=2`), and a bonus of nothing is no bonus."""
    field = WorkerDecision._meta.get_field("amount")
    too_much = Decimal(10) ** (field.max_digits - field.decimal_places)
    cent = Decimal(1).scaleb(-field.decimal_places)
    if amount is None:
        return "A bonus needs an amount above 0."
    if not isinstance(amount, Decimal) or not amount.is_finite():
        return "A bonus needs an amount in dollars, e.g. 0.50."
    if amount <= 0:
        return "A bonus needs an amount above 0."
    if amount >= too_much:
        return f"A bonus must be less than ${too_much:,}."
    if amount != amount.quantize(cent):
        return "Give the amount in whole cents, e.g. 0.50."
    return ""


def decision_update(
    *,
    decision: WorkerDecision,
    user,
    state: str,
    action: str | None = None,
    amount: Decimal | None = None,
    reason: str | None = None,
) -> WorkerDecision:
    """Confirm, dismiss or change a decision that has not been sent yet."""
    errors: dict[str, list[str]] = {}
    if decision.state in (DecisionState.APPLIED, DecisionState.SENDING):
        raise Conflict("This decision was already sent to the platform and cannot change.")
    if state not in (DecisionState.PROPOSED, DecisionState.CONFIRMED, DecisionState.DISMISSED):
        errors["state"] = ["Choose proposed, confirmed or dismissed."]
    action = action or decision.action
    if action not in ALLOWED_CHANGES[decision.action]:
        errors["action"] = [
            f"A {decision.action} decision can become: "
            + ", ".join(sorted(ALLOWED_CHANGES[decision.action]))
            + "."
        ]
    if action == DecisionAction.BONUS:
        amount = decision.amount if amount is None else amount
        problem = _bonus_amount_problem(amount)
        if problem:
            errors["amount"] = [problem]
    reason = decision.reason if reason is None else reason.strip()
    if not reason:
        errors["reason"] = ["Give a reason; workers see it as feedback."]
    if action == DecisionAction.REJECT and action != decision.action and reason == decision.reason:
        errors["reason"] = ["Say why you reject this assignment."]
    if errors:
        raise InvalidInput("The decision was not changed.", fields=errors)
    decision.state = state
    decision.action = action
    decision.amount = amount if action == DecisionAction.BONUS else None
    decision.reason = reason
    decision.proposed_by_filters = False
    decision.decided_by = user
    decision.error = ""
    decision.save()
    return decision


def decisions_confirm_proposed(*, campaign: Campaign, user) -> int:
    """Confirm every untouched proposal at once ("accept the filters' proposals")."""
    return WorkerDecision.objects.filter(campaign=campaign, state=DecisionState.PROPOSED).update(
        state=DecisionState.CONFIRMED, decided_by=user, proposed_by_filters=False
    )


def decision_apply(*, decision: WorkerDecision) -> WorkerDecision:
    """Send one confirmed decision to the worker's platform; the outcome is recorded.

    The decision is claimed first (confirmed → sending, a conditional update), so two
    clicks or two researchers cannot send it twice; the platform call itself runs
    outside any transaction, so the platform log `cfannotate.crowd.review` keeps is
    committed whatever happens here. A send interrupted by a crash stays "sending" and
    may be sent again after SENDING_STALE: the review calls are idempotent.
    """
    from cfannotate.crowd import review

    now = timezone.now()
    sendable = Q(state__in=[DecisionState.CONFIRMED, DecisionState.FAILED]) | Q(
        state=DecisionState.SENDING, updated_at__lt=now - SENDING_STALE
    )
    claimed = WorkerDecision.objects.filter(sendable, id=decision.id).update(
        state=DecisionState.SENDING, updated_at=now
    )
    if not claimed:
        raise Conflict("Only a confirmed decision (or one that failed) can be sent.")
    decision = WorkerDecision.objects.select_related("assignment", "worker").get(id=decision.id)
    try:
        _send(review, decision)
    except CfannotateError as error:
        decision.state = DecisionState.FAILED
        decision.error = error.message
        decision.save(update_fields=["state", "error", "updated_at"])
        return decision
    decision.state = DecisionState.APPLIED
    decision.error = ""
    decision.applied_at = timezone.now()
    decision.save(update_fields=["state", "error", "applied_at", "updated_at"])
    return decision


def _send(review, decision: WorkerDecision) -> None:
    if decision.action == DecisionAction.APPROVE:
        review.assignment_approve(assignment=decision.assignment, feedback=decision.reason)
    elif decision.action == DecisionAction.REJECT:
        review.assignment_reject(assignment=decision.assignment, feedback=decision.reason)
    elif decision.action == DecisionAction.BONUS:
        review.worker_bonus(
            assignment=decision.assignment,
            amount=decision.amount,
            reason=decision.reason,
            unique_token=f"cfannotate-bonus-{decision.id}",
        )
    else:
        # A researcher's block: their campaigns only, never other researchers' (nor the
        # platform's account-wide block, which only an administrator sends).
        review.worker_block(
            worker=decision.worker,
            reason=decision.reason,
            scope=BlockScope.RESEARCHER,
            campaign=decision.campaign,
            by=decision.decided_by,
        )


def decisions_apply(*, campaign: Campaign) -> tuple[int, int]:
    """Send every confirmed decision; returns (applied, failed)."""
    applied = failed = 0
    pending = WorkerDecision.objects.filter(campaign=campaign, state=DecisionState.CONFIRMED)
    for decision in pending.order_by("id"):
        outcome = decision_apply(decision=decision)
        applied += outcome.state == DecisionState.APPLIED
        failed += outcome.state == DecisionState.FAILED
    return applied, failed
