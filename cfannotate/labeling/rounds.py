"""A worker's rounds: serve one, save every click, submit it once, show training feedback.

Every write locks the assignment row, so two tabs, a double click or a replayed
request are applied one after the other and each sees the other's result: a round
is submitted once, and a replay gets the same outcome back.

These are the hot requests of a labeling campaign, so each reads what it needs once,
after taking the lock: the assignment's rounds in one query (`_Plan`), the round's
original and counterfactuals in one, its judgments in one, the labels in one.
Quality control does not run here: it is queued once the assignment ends
(`cfannotate.quality.tasks`).
"""

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TypeVar

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from cfannotate.campaigns.models import Campaign, CampaignLabel, Original
from cfannotate.core.exceptions import Conflict, Forbidden, InvalidInput, NotFound
from cfannotate.crowd.tokens import assignment_token_read
from cfannotate.labeling.assignments import (
    LeaseLapsed,
    assignment_expire,
    assignment_lock,
    completion_code,
    raise_if_expired,
)
from cfannotate.labeling.highlight import Segment, change_segments
from cfannotate.labeling.models import (
    Assignment,
    AssignmentState,
    GoldItem,
    Judgment,
    LabelingUnit,
    Round,
    RoundKind,
    UnitItem,
)
from cfannotate.quality.tasks import assess_assignment_on_commit

MAX_ITEMS_PER_ROUND = 10  # gold rounds may hold up to this many; units hold three

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
        if round_.submitted_at is not None:
            raise RoundNotCurrent(
                "This round is already submitted; its answers are final.", round_=round_
            )
        if current is not None and current.position != round_.position:
            raise RoundNotCurrent(
                f"Round {round_.position} comes later. Finish the round you are on first.",
                round_=round_,
            )


@dataclass(frozen=True)
class _Content:
    """A round's original (with its label) and its counterfactuals (candidate id, text)."""

    original: Original
    sources: list[tuple[int, str]]

    @property
    def candidate_ids(self) -> list[int]:
        return [candidate_id for candidate_id, _ in self.sources]


def _content(round_: Round) -> _Content:
    """One query: the round's items with their candidates, original and original label."""
    if round_.kind == RoundKind.REAL:
        items = UnitItem.objects.filter(unit_id=round_.unit_id).select_related(
            "candidate", "unit__original__label"
        )
        parent = "unit"
    else:
        items = GoldItem.objects.filter(gold_round_id=round_.gold_round_id).select_related(
            "candidate", "gold_round__original__label"
        )
        parent = "gold_round"
    items = list(items.order_by("position"))
    if items:
        original = getattr(items[0], parent).original
    else:  # an empty unit shows its original alone
        source = round_.unit if round_.kind == RoundKind.REAL else round_.gold_round
        original = source.original
    return _Content(
        original=original, sources=[(item.candidate_id, item.candidate.text) for item in items]
    )


def _judgments(round_: Round) -> dict[int, Judgment]:
    return {judgment.candidate_id: judgment for judgment in round_.judgments.all()}


def _labels(campaign: Campaign) -> list[CampaignLabel]:
    return list(campaign.labels.order_by("position", "id"))


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
    items = []
    for index, (candidate_id, text) in enumerate(content.sources, start=1):
        judgment = judgments.get(candidate_id)
        items.append(
            ItemView(
                index=index,
                text=text,
                segments=change_segments(original.text, text),
                is_valid=judgment.is_valid if judgment else None,
                label_id=judgment.label_id if judgment else None,
            )
        )
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
        original_label=original.label,
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
        return _view(
            locked,
            round_,
            plan=plan,
            content=content,
            judgments=judgments,
            labels=_labels(locked.campaign),
        )

    return _under_lock(assignment, now, serve)


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
    if changed:
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


def judgment_save(
    *, assignment: Assignment, position: int, answers: list[Answer], now: datetime | None = None
) -> RoundView:
    """Save what the worker clicked, so a reload or another device shows it again."""
    now = now or timezone.now()

    def save(locked: Assignment) -> RoundView:
        plan = _Plan(locked)
        round_ = plan.at(position)
        labels = _labels(locked.campaign)
        if round_.served_at is None:
            raise_if_expired(locked)
            plan.check_is_current(round_)
            raise Conflict("This round has not been shown yet. Reload the page.")
        content, judgments = _content(round_), _judgments(round_)

        def view() -> RoundView:
            return _view(
                locked, round_, plan=plan, content=content, judgments=judgments, labels=labels
            )

        if round_.submitted_at is not None and _already_given(answers, content, judgments, labels):
            # A save that was still on its way when the round was submitted with the
            # same answers: nothing to do, and nothing to complain about.
            return view()
        raise_if_expired(locked)
        plan.check_is_current(round_)
        _apply_answers(answers, content=content, judgments=judgments, labels=labels, now=now)
        return view()

    return _under_lock(assignment, now, save)


# --- Submitting ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class SubmitOutcome:
    """Where the worker goes next. The same for a first submit and any replay of it."""

    assignment: Assignment
    submitted_position: int
    next_position: int | None  # None: the assignment is complete
    show_feedback: bool  # a training round: its feedback page comes first


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
) -> SubmitOutcome:
    """Save the final answers and submit the round, once; replays get the same outcome."""
    now = now or timezone.now()

    def submit(locked: Assignment) -> SubmitOutcome | dict[str, list[str]]:
        plan = _Plan(locked)
        round_ = plan.at(position)
        if round_.submitted_at is not None:
            return _outcome(locked, plan, round_)  # a double submit or a replay
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
        return _submit(locked, plan, round_, now)

    result = _under_lock(assignment, now, submit)
    if isinstance(result, SubmitOutcome):
        return result
    # Outside the transaction: the answers given so far stay saved.
    raise InvalidInput(
        "Answer every counterfactual before submitting: Valid or Invalid, and a label.",
        fields=result,
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
        assess_assignment_on_commit(locked.id)
    return _outcome(locked, plan, round_)
