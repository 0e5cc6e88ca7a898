"""A worker's rounds: serve one, save every click, submit it once, show training feedback.

Every write locks the assignment row, so two tabs, a double click or a replayed
request are applied one after the other and each sees the other's result: a round
is submitted once, and a replay gets the same outcome back.

These are the hot requests of a labeling campaign, so each reads what it needs once,
after taking the lock: the assignment's rounds in one query (`_Plan`) and the round's
judgments in one. What cannot change once a worker holds a round comes from a
per-process cache: the round's original and counterfactuals with their highlighted
changes (a candidate or gold item a worker was given refuses edits), and the
campaign's labels (created with the campaign; an admin edit saves the campaign,
whose `updated_at` is part of the key).
Quality control does not run here: it is queued once the assignment ends
(`cfannotate.quality.tasks`).
"""

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from functools import lru_cache
from typing import TypeVar

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from cfannotate.campaigns.models import Campaign, CampaignLabel, Original
from cfannotate.core.exceptions import Conflict, Forbidden, InvalidInput, NotFound
from cfannotate.core.worker_tokens import assignment_token_read
from cfannotate.labeling.assignments import (
    LeaseLapsed,
    assignment_expire,
    assignment_lock,
    completion_code,
    raise_if_expired,
)
from cfannotate.labeling.highlight import Segment, change_segments
from cfannotate.labeling.hooks import assignment_ended
from cfannotate.labeling.models import (
    Assignment,
    AssignmentState,
    GoldItem,
    GoldRound,
    Judgment,
    LabelingUnit,
    Round,
    RoundKind,
    UnitItem,
)

MAX_ITEMS_PER_ROUND = 10  # training rounds may hold up to this many; units hold three

T = TypeVar("T")


class RoundNotCurrent(Conflict):
    """The round asked for is already submitted, or comes later: the worker is elsewhere."""

    def __init__(self, message: str, *, round_: Round) -> None:
        super().__init__(message)
        self.round = round_


# --- Reading a worker's token ------------------------------------------------------


def assignment_from_token(token: str) -> Assignment:
    """The assignment a worker token is bound to; Forbidden for a tampered or revoked token."""
    claim = assignment_token_read(token)
    assignment = (
        Assignment.objects.select_related("campaign", "worker")
        .filter(id=claim.assignment_id, token_nonce=claim.nonce)
        .first()
    )
    if assignment is None:
        raise Forbidden(
            "This link is not valid. Open the task again from the page that sent you here."
        )
    return assignment


# --- What a round shows (the same for real and gold rounds) -------------------------


@dataclass(frozen=True)
class ItemView:
    index: int  # 1-based place in the round; what the worker's requests name
    text: str
    segments: list[Segment]
    is_valid: bool | None
    label_id: int | None

    @property
    def complete(self) -> bool:
        return self.is_valid is not None and self.label_id is not None


@dataclass(frozen=True)
class RoundView:
    assignment: Assignment
    round: Round
    number: int  # 1-based among non-training rounds ("Round k of N"); training counts apart
    total: int
    is_training: bool
    original_text: str
    original_context: str
    original_label: CampaignLabel
    labels: list[CampaignLabel]
    items: list[ItemView]

    @property
    def complete(self) -> bool:
        return all(item.complete for item in self.items)

    @property
    def position(self) -> int:
        return self.round.position


@dataclass(frozen=True)
class FeedbackItem:
    index: int
    text: str
    segments: list[Segment]
    given_valid: bool | None
    given_label: CampaignLabel | None
    expected_valid: bool
    expected_label: CampaignLabel
    explanation: str

    @property
    def correct(self) -> bool:
        return self.given_valid == self.expected_valid and (
            self.given_label is not None and self.given_label.id == self.expected_label.id
        )


class _Plan:
    """An assignment's rounds in order, read once per request (after the lock, for writes)."""

    def __init__(self, assignment: Assignment) -> None:
        self.rounds = list(Round.objects.filter(assignment_id=assignment.id).order_by("position"))

    def at(self, position: int) -> Round:
        for round_ in self.rounds:
            if round_.position == position:
                return round_
        raise NotFound(f"This assignment has no round {position}.")

    @property
    def current(self) -> Round | None:
        """The first round not yet submitted; None when the assignment is done."""
        return next((round_ for round_ in self.rounds if round_.submitted_at is None), None)

    def following(self, round_: Round) -> Round | None:
        return next((later for later in self.rounds if later.position > round_.position), None)

    @property
    def training(self) -> int:
        return sum(1 for round_ in self.rounds if round_.kind == RoundKind.TRAINING)

    def check_is_current(self, round_: Round) -> None:
        current = self.current
        _raise_if_submitted(round_)
        if current is not None and current.position != round_.position:
            raise RoundNotCurrent(
                f"Round {round_.position} comes later. Finish the round you are on first.",
                round_=round_,
            )


def _raise_if_submitted(round_: Round) -> None:
    if round_.submitted_at is not None:
        raise RoundNotCurrent(
            "This round was already submitted, so its answers are final. Reload the page to go on.",
            round_=round_,
        )


@dataclass(frozen=True)
class _Content:
    """A round's original (with its label) and its counterfactuals: (candidate id, text,
    highlighted changes against the original), in the round's order."""

    original: Original
    sources: tuple[tuple[int, str, tuple[Segment, ...]], ...]

    @property
    def candidate_ids(self) -> list[int]:
        return [candidate_id for candidate_id, _, _ in self.sources]


# Rounds in flight at once across a campaign's workers, with room to spare; an entry
# is an original and three short texts.
CONTENT_CACHE_SIZE = 4096


def _content(round_: Round) -> _Content:
    if round_.kind == RoundKind.REAL:
        return _source_content("unit", round_.unit_id)
    return _source_content("gold_round", round_.gold_round_id)


@lru_cache(maxsize=CONTENT_CACHE_SIZE)
def _source_content(source: str, source_id: int) -> _Content:
    """One query: a unit's or gold round's items with their candidates, original and
    original label."""
    item_model, source_model = (
        (UnitItem, LabelingUnit) if source == "unit" else (GoldItem, GoldRound)
    )
    items = item_model.objects.filter(**{f"{source}_id": source_id}).select_related(
        "candidate", f"{source}__original__label"
    )
    items = list(items.order_by("position"))
    if items:
        original = getattr(items[0], source).original
    else:  # an empty unit shows its original alone
        holder = source_model.objects.select_related("original__label").get(id=source_id)
        original = holder.original
    return _Content(
        original=original,
        sources=tuple(
            (
                item.candidate_id,
                item.candidate.text,
                tuple(change_segments(original.text, item.candidate.text)),
            )
            for item in items
        ),
    )


def _judgments(round_: Round) -> dict[int, Judgment]:
    return {judgment.candidate_id: judgment for judgment in round_.judgments.all()}


def _labels(campaign: Campaign) -> list[CampaignLabel]:
    return list(_campaign_labels(campaign.id, campaign.updated_at))


@lru_cache(maxsize=256)
def _campaign_labels(campaign_id: int, updated_at: datetime) -> tuple[CampaignLabel, ...]:
    return tuple(CampaignLabel.objects.filter(campaign_id=campaign_id).order_by("position", "id"))


def clear_caches() -> None:
    """Forget cached round contents and labels (tests that reuse ids call this)."""
    _source_content.cache_clear()
    _campaign_labels.cache_clear()


def _item_views(content: _Content, judgments: dict[int, Judgment]) -> list[ItemView]:
    items = []
    for index, (candidate_id, text, segments) in enumerate(content.sources, start=1):
        judgment = judgments.get(candidate_id)
        items.append(
            ItemView(
                index=index,
                text=text,
                segments=list(segments),
                is_valid=judgment.is_valid if judgment else None,
                label_id=judgment.label_id if judgment else None,
            )
        )
    return items


def _view(
    assignment: Assignment,
    round_: Round,
    *,
    plan: _Plan,
    content: _Content,
    judgments: dict[int, Judgment],
    labels: list[CampaignLabel],
) -> RoundView:
    original = content.original
    items = _item_views(content, judgments)
    is_training = round_.kind == RoundKind.TRAINING
    training = plan.training
    return RoundView(
        assignment=assignment,
        round=round_,
        number=round_.position if is_training else round_.position - training,
        total=training if is_training else len(plan.rounds) - training,
        is_training=is_training,
        original_text=original.text,
        original_context=original.context,
        # From the labels read for this request: the cached original's may be older.
        original_label=next(
            (label for label in labels if label.id == original.label_id), original.label
        ),
        labels=labels,
        items=items,
    )


def round_view(assignment: Assignment, round_: Round) -> RoundView:
    """What a round shows, with the answers saved so far (read-only)."""
    return _view(
        assignment,
        round_,
        plan=_Plan(assignment),
        content=_content(round_),
        judgments=_judgments(round_),
        labels=_labels(assignment.campaign),
    )


def training_feedback(assignment: Assignment, round_: Round) -> list[FeedbackItem]:
    """Expected answers of a submitted training round, beside the worker's own."""
    if round_.kind != RoundKind.TRAINING or round_.submitted_at is None:
        raise Conflict("Feedback is shown for a training round once it is submitted.")
    judgments = {
        judgment.candidate_id: judgment for judgment in round_.judgments.select_related("label")
    }
    feedback = []
    gold_items = round_.gold_round.items.select_related(
        "candidate", "expected_label", "gold_round__original"
    )
    for index, item in enumerate(gold_items.order_by("position"), start=1):
        original = item.gold_round.original
        judgment = judgments.get(item.candidate_id)
        feedback.append(
            FeedbackItem(
                index=index,
                text=item.candidate.text,
                segments=change_segments(original.text, item.candidate.text),
                given_valid=judgment.is_valid if judgment else None,
                given_label=judgment.label if judgment else None,
                expected_valid=item.expected_valid,
                expected_label=item.expected_label,
                explanation=item.explanation,
            )
        )
    return feedback


# --- Where the worker is --------------------------------------------------------------


def current_round(assignment: Assignment) -> Round | None:
    """The first round not yet submitted; None when the assignment is done."""
    return assignment.rounds.filter(submitted_at__isnull=True).order_by("position").first()


def _under_lock(assignment: Assignment, now: datetime, body: Callable[[Assignment], T]) -> T:
    """Run `body(locked assignment)` in one transaction that holds the assignment's lock.

    The lock renews the lease. An assignment whose lease ran out is expired first, in
    its own transaction, so its units go back even when this request then fails; the
    body then sees it expired. The assignment read with the token tells whether that
    is due; the lock checks again, in case the lease ran out in between.
    """
    if assignment.state == AssignmentState.ACTIVE and assignment.lease_expires_at < now:
        assignment_expire(assignment_id=assignment.id, now=now)
    try:
        with transaction.atomic():
            return body(assignment_lock(assignment=assignment, now=now))
    except LeaseLapsed:
        assignment_expire(assignment_id=assignment.id, now=now)
    with transaction.atomic():
        return body(assignment_lock(assignment=assignment, now=now))


def assignment_keep(*, assignment: Assignment, now: datetime | None = None) -> datetime:
    """The worker says they are still there, before their lease runs out (the page warns
    them): renew it, as any answer would. Returns when it ends now. An assignment that
    ended raises as any write to it does."""
    now = now or timezone.now()

    def keep(locked: Assignment) -> datetime:
        raise_if_expired(locked)
        if locked.state != AssignmentState.ACTIVE:
            raise Conflict("This assignment is already submitted: there is nothing to keep.")
        return locked.lease_expires_at

    return _under_lock(assignment, now, keep)


def lease_seconds_left(assignment: Assignment, now: datetime | None = None) -> int:
    """Whole seconds until an active assignment's lease runs out (0 for any other)."""
    if assignment.state != AssignmentState.ACTIVE:
        return 0
    left = (assignment.lease_expires_at - (now or timezone.now())).total_seconds()
    return max(0, int(left))


# --- Serving -------------------------------------------------------------------------------


def round_serve(*, assignment: Assignment, position: int, now: datetime | None = None) -> RoundView:
    """Show the current round; the first showing starts its clock (server time).

    Raises `RoundNotCurrent` for a round already submitted or not reached yet.
    """
    now = now or timezone.now()

    def serve(locked: Assignment) -> RoundView:
        raise_if_expired(locked)
        plan = _Plan(locked)
        round_ = plan.at(position)
        plan.check_is_current(round_)
        return _serve(locked, plan, round_, now, labels=_labels(locked.campaign))

    return _under_lock(assignment, now, serve)


def _serve(
    locked: Assignment,
    plan: _Plan,
    round_: Round,
    now: datetime,
    *,
    labels: list[CampaignLabel],
) -> RoundView:
    """Show the current round `round_`, in the caller's transaction."""
    content = _content(round_)
    if round_.served_at is None:
        round_.served_at = now
        Round.objects.filter(id=round_.id).update(served_at=now)
        Judgment.objects.bulk_create(
            [
                Judgment(round=round_, candidate_id=candidate_id)
                for candidate_id in content.candidate_ids
            ],
            ignore_conflicts=True,
        )
        judgments = {}  # created empty just now, with the clock
    else:
        judgments = _judgments(round_)
    return _view(locked, round_, plan=plan, content=content, judgments=judgments, labels=labels)


# --- Saving clicks ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Answer:
    """One item's answer as the worker's request states it; None leaves a field unchanged."""

    index: int
    is_valid: bool | None = None
    label: str | None = None  # the label's value (e.g. "positive")


VALID_VALUES = {
    "valid": True,
    "1": True,
    "true": True,
    "invalid": False,
    "0": False,
    "false": False,
}


def parse_valid(value: str | None, *, field: str) -> bool | None:
    if value is None or value == "":
        return None
    try:
        return VALID_VALUES[str(value).strip().lower()]
    except KeyError:
        raise InvalidInput(
            f"{field} must be valid or invalid, not {value!r}.", fields={field: ["Unknown value."]}
        ) from None


def _check_answers(answers: list[Answer], content: _Content, labels: dict[str, CampaignLabel]):
    for answer in answers:
        if not 1 <= answer.index <= len(content.sources):
            raise InvalidInput(
                f"This round has {len(content.sources)} counterfactuals; there is no item "
                f"{answer.index}.",
                fields={"item": ["Out of range."]},
            )
        if answer.label is not None and answer.label not in labels:
            raise InvalidInput(
                f"{answer.label!r} is not a label of this task.",
                fields={f"label-{answer.index}": ["Unknown label."]},
            )


def _apply_answers(
    answers: list[Answer],
    *,
    content: _Content,
    judgments: dict[int, Judgment],
    labels: list[CampaignLabel],
    now: datetime,
) -> None:
    """Write the answers that change something, in one UPDATE."""
    by_value = {label.value: label for label in labels}
    _check_answers(answers, content, by_value)
    changed = {}
    for answer in answers:
        judgment = judgments[content.candidate_ids[answer.index - 1]]
        is_valid = judgment.is_valid if answer.is_valid is None else answer.is_valid
        label_id = judgment.label_id if answer.label is None else by_value[answer.label].id
        if (is_valid, label_id) != (judgment.is_valid, judgment.label_id):
            judgment.is_valid, judgment.label_id, judgment.updated_at = is_valid, label_id, now
            changed[judgment.id] = judgment
    if len(changed) == 1:  # a click: one plain UPDATE, cheaper to build than bulk_update's CASE
        (judgment,) = changed.values()
        Judgment.objects.filter(id=judgment.id).update(
            is_valid=judgment.is_valid, label_id=judgment.label_id, updated_at=now
        )
    elif changed:
        Judgment.objects.bulk_update(changed.values(), ["is_valid", "label", "updated_at"])


def _already_given(answers: list[Answer], content: _Content, judgments, labels) -> bool:
    label_ids = {label.value: label.id for label in labels}
    for answer in answers:
        if not 1 <= answer.index <= len(content.sources):
            return False
        judgment = judgments.get(content.candidate_ids[answer.index - 1])
        if judgment is None:
            return False
        if answer.is_valid is not None and answer.is_valid != judgment.is_valid:
            return False
        if answer.label is not None and label_ids.get(answer.label, -1) != judgment.label_id:
            return False
    return True


@dataclass(frozen=True)
class SavedRound:
    """A round's items after a save: what the save's answer shows."""

    items: list[ItemView]

    @property
    def complete(self) -> bool:
        return all(item.complete for item in self.items)


def _round_at(assignment: Assignment, position: int) -> Round:
    round_ = Round.objects.filter(assignment_id=assignment.id, position=position).first()
    if round_ is None:
        raise NotFound(f"This assignment has no round {position}.")
    return round_


def judgment_save(
    *, assignment: Assignment, position: int, answers: list[Answer], now: datetime | None = None
) -> SavedRound:
    """Save what the worker clicked, so a reload or another device shows it again.

    The most frequent request of all (one per click), so it reads only the round it
    saves to: a round that was served and is not submitted is the current one, since
    only the current round is served and rounds are submitted in order.
    """
    now = now or timezone.now()

    def save(locked: Assignment) -> SavedRound:
        round_ = _round_at(locked, position)
        if round_.served_at is None:
            raise_if_expired(locked)
            _Plan(locked).check_is_current(round_)
            raise Conflict("This round has not been shown yet. Reload the page.")
        labels = _labels(locked.campaign)
        content, judgments = _content(round_), _judgments(round_)
        if round_.submitted_at is not None and _already_given(answers, content, judgments, labels):
            # A save that was still on its way when the round was submitted with the
            # same answers: nothing to do, and nothing to complain about.
            return SavedRound(items=_item_views(content, judgments))
        raise_if_expired(locked)
        _raise_if_submitted(round_)
        _apply_answers(answers, content=content, judgments=judgments, labels=labels, now=now)
        return SavedRound(items=_item_views(content, judgments))

    return _under_lock(assignment, now, save)


# --- Submitting ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class SubmitOutcome:
    """Where the worker goes next. The same for a first submit and any replay of it."""

    assignment: Assignment
    submitted_position: int
    next_position: int | None  # None: the assignment is complete
    show_feedback: bool  # a training round: its feedback page comes first
    # The next round, already served, when the caller asked for it (`serve_next`) and the
    # worker goes straight there: a first submit of a round without feedback, not the last.
    next_view: RoundView | None = None
    # A replay whose answers differ from those the round was submitted with (another tab
    # or device submitted it first): those first answers are kept, and the worker is told.
    earlier_answers_kept: bool = False


def _outcome(assignment: Assignment, plan: _Plan, round_: Round) -> SubmitOutcome:
    following = plan.following(round_)
    return SubmitOutcome(
        assignment=assignment,
        submitted_position=round_.position,
        next_position=following.position if following else None,
        show_feedback=round_.kind == RoundKind.TRAINING,
    )


def _missing(content: _Content, judgments: dict[int, Judgment]) -> dict[str, list[str]]:
    missing = {}
    for index, candidate_id in enumerate(content.candidate_ids, start=1):
        judgment = judgments.get(candidate_id)
        if judgment is None or judgment.is_valid is None:
            missing[f"valid-{index}"] = ["Choose Valid or Invalid."]
        if judgment is None or judgment.label_id is None:
            missing[f"label-{index}"] = ["Choose a label."]
    return missing


def round_submit(
    *,
    assignment: Assignment,
    position: int,
    answers: list[Answer] = (),
    now: datetime | None = None,
    serve_next: bool = False,
) -> SubmitOutcome:
    """Save the final answers and submit the round, once; replays get the same outcome.

    With `serve_next`, the round that comes next is served in the same transaction and
    returned as `next_view`: one request from one round to the next.
    """
    now = now or timezone.now()

    def submit(locked: Assignment) -> SubmitOutcome | dict[str, list[str]]:
        plan = _Plan(locked)
        round_ = plan.at(position)
        if round_.submitted_at is not None:  # a double submit or a replay
            same = _already_given(
                list(answers), _content(round_), _judgments(round_), _labels(locked.campaign)
            )
            return replace(_outcome(locked, plan, round_), earlier_answers_kept=not same)
        raise_if_expired(locked)
        plan.check_is_current(round_)
        if round_.served_at is None:
            raise Conflict("This round has not been shown yet. Reload the page.")
        content, judgments = _content(round_), _judgments(round_)
        labels = _labels(locked.campaign)
        _apply_answers(list(answers), content=content, judgments=judgments, labels=labels, now=now)
        missing = _missing(content, judgments)
        if missing:
            return missing
        outcome = _submit(locked, plan, round_, now)
        if not serve_next or outcome.show_feedback or plan.current is None:
            return outcome
        # Submitted rounds go in order, so the one after this is the current one now.
        next_view = _serve(locked, plan, plan.current, now, labels=labels)
        return replace(outcome, next_view=next_view)

    result = _under_lock(assignment, now, submit)
    if isinstance(result, SubmitOutcome):
        return result
    # Outside the transaction: the answers given so far stay saved.
    raise InvalidInput(_missing_message(result), fields=result)


def _missing_message(missing: dict[str, list[str]]) -> str:
    """Which counterfactuals a refused submit lacks answers for, in words (not only in
    the red borders: a screen reader does not read a colour)."""
    indices = sorted({int(key.partition("-")[2]) for key in missing})
    numbers = [str(index) for index in indices]
    if len(numbers) == 1:
        which = f"edited version {numbers[0]} still needs"
    else:
        which = f"edited versions {', '.join(numbers[:-1])} and {numbers[-1]} still need"
    return (
        f"Answer every counterfactual before submitting: {which} an answer "
        "(Valid or Invalid, and a label)."
    )


def _submit(locked: Assignment, plan: _Plan, round_: Round, now: datetime) -> SubmitOutcome:
    """Mark the round submitted, in the caller's transaction; the last one ends the assignment."""
    round_.submitted_at = now
    Round.objects.filter(id=round_.id).update(submitted_at=now)
    if round_.kind == RoundKind.REAL:
        LabelingUnit.objects.filter(id=round_.unit_id).update(completed=F("completed") + 1)
    if plan.current is None:
        locked.state = AssignmentState.SUBMITTED
        locked.submitted_at = now
        locked.completion_code = completion_code()
        locked.save(update_fields=["state", "submitted_at", "completion_code"])
        # Quality control catches up in the background (C.2 filters, the vote, re-queues).
        assignment_ended.send(sender=Assignment, assignment_id=locked.id)
    elif round_.kind == RoundKind.GOLD and not any(
        later.kind == RoundKind.GOLD and later.submitted_at is None for later in plan.rounds
    ):
        # The assignment's gold is all answered: the worker's verdict need not wait for
        # the end, and a worker the filters remove is served no more rounds.
        assignment_ended.send(sender=Assignment, assignment_id=locked.id)
    return _outcome(locked, plan, round_)
