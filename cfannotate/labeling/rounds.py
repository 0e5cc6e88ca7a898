"""A worker's rounds: serve one, save every click, submit it once, show training feedback.

Every write locks the assignment row, so two tabs, a double click or a replayed
request are applied one after the other and each sees the other's result: a round
is submitted once, and a replay gets the same outcome back.
"""

from dataclasses import dataclass
from datetime import datetime
from functools import partial

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from cfannotate.campaigns.models import Campaign, CampaignLabel
from cfannotate.core.exceptions import Conflict, Forbidden, InvalidInput, NotFound
from cfannotate.crowd.tokens import assignment_token_read
from cfannotate.labeling.assignments import (
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
from cfannotate.quality.services import quality_after_round_safely

MAX_ITEMS_PER_ROUND = 10  # gold rounds may hold up to this many; units hold three


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


def _round_sources(round_: Round) -> list[tuple[int, str]]:
    """(candidate id, text) of the round's counterfactuals, in display order."""
    if round_.kind == RoundKind.REAL:
        items = UnitItem.objects.filter(unit_id=round_.unit_id).select_related("candidate")
    else:
        items = GoldItem.objects.filter(gold_round_id=round_.gold_round_id).select_related(
            "candidate"
        )
    return [(item.candidate_id, item.candidate.text) for item in items.order_by("position")]


def _original_of(round_: Round):
    source = round_.unit if round_.kind == RoundKind.REAL else round_.gold_round
    return source.original


def _counts(assignment: Assignment) -> tuple[int, int]:
    rounds = list(assignment.rounds.values_list("kind", flat=True))
    training = sum(1 for kind in rounds if kind == RoundKind.TRAINING)
    return training, len(rounds) - training


def _labels(campaign: Campaign) -> list[CampaignLabel]:
    return list(campaign.labels.order_by("position", "id"))


def round_view(assignment: Assignment, round_: Round) -> RoundView:
    training, total = _counts(assignment)
    original = _original_of(round_)
    judgments = {judgment.candidate_id: judgment for judgment in round_.judgments.all()}
    items = []
    for index, (candidate_id, text) in enumerate(_round_sources(round_), start=1):
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
    return RoundView(
        assignment=assignment,
        round=round_,
        number=round_.position if is_training else round_.position - training,
        total=training if is_training else total,
        is_training=is_training,
        original_text=original.text,
        original_context=original.context,
        original_label=original.label,
        labels=_labels(assignment.campaign),
        items=items,
    )


def training_feedback(assignment: Assignment, round_: Round) -> list[FeedbackItem]:
    """Expected answers of a submitted training round, beside the worker's own."""
    if round_.kind != RoundKind.TRAINING or round_.submitted_at is None:
        raise Conflict("Feedback is shown for a training round once it is submitted.")
    original = _original_of(round_)
    judgments = {
        judgment.candidate_id: judgment for judgment in round_.judgments.select_related("label")
    }
    feedback = []
    gold_items = round_.gold_round.items.select_related("candidate", "expected_label")
    for index, item in enumerate(gold_items.order_by("position"), start=1):
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


def _round_at(assignment: Assignment, position: int) -> Round:
    round_ = assignment.rounds.filter(position=position).first()
    if round_ is None:
        raise NotFound(f"This assignment has no round {position}.")
    return round_


def _check_is_current(assignment: Assignment, round_: Round) -> None:
    current = current_round(assignment)
    if round_.submitted_at is not None:
        raise Conflict("This round is already submitted; its answers are final.")
    if current is not None and current.position != round_.position:
        raise Conflict(f"Round {round_.position} comes later. Finish the round you are on first.")


def _writable(assignment: Assignment, now: datetime) -> Assignment:
    """Lock the assignment for a write; expired or returned ones refuse with a clear message."""
    assignment_expire(assignment_id=assignment.id, now=now)
    return assignment_lock(assignment_id=assignment.id, now=now)


# --- Serving -------------------------------------------------------------------------------


def round_serve(*, assignment: Assignment, position: int, now: datetime | None = None) -> RoundView:
    """Show the current round; the first showing starts its clock (server time)."""
    now = now or timezone.now()
    assignment_expire(assignment_id=assignment.id, now=now)
    with transaction.atomic():
        assignment = assignment_lock(assignment_id=assignment.id, now=now)
        round_ = _round_at(assignment, position)
        _check_is_current(assignment, round_)
        if round_.served_at is None:
            round_.served_at = now
            round_.save(update_fields=["served_at"])
            Judgment.objects.bulk_create(
                [
                    Judgment(round=round_, candidate_id=candidate_id)
                    for candidate_id, _ in _round_sources(round_)
                ],
                ignore_conflicts=True,
            )
    return round_view(assignment, round_)


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


def _apply_answers(round_: Round, campaign: Campaign, answers: list[Answer]) -> None:
    candidate_ids = [candidate_id for candidate_id, _ in _round_sources(round_)]
    labels = {label.value: label for label in _labels(campaign)}
    judgments = {judgment.candidate_id: judgment for judgment in round_.judgments.all()}
    for answer in answers:
        if not 1 <= answer.index <= len(candidate_ids):
            raise InvalidInput(
                f"This round has {len(candidate_ids)} counterfactuals; there is no item "
                f"{answer.index}.",
                fields={"item": ["Out of range."]},
            )
        if answer.label is not None and answer.label not in labels:
            raise InvalidInput(
                f"{answer.label!r} is not a label of this task.",
                fields={f"label-{answer.index}": ["Unknown label."]},
            )
    for answer in answers:
        judgment = judgments[candidate_ids[answer.index - 1]]
        if answer.is_valid is not None:
            judgment.is_valid = answer.is_valid
        if answer.label is not None:
            judgment.label = labels[answer.label]
        judgment.save(update_fields=["is_valid", "label", "updated_at"])


def judgment_save(
    *, assignment: Assignment, position: int, answers: list[Answer], now: datetime | None = None
) -> RoundView:
    """Save what the worker clicked, so a reload or another device shows it again."""
    now = now or timezone.now()
    with transaction.atomic():
        locked = Assignment.objects.select_for_update(of=("self",)).select_related("campaign")
        round_ = _round_at(locked.get(id=assignment.id), position)
        if round_.submitted_at is not None and _already_given(round_, answers):
            # A save that was still on its way when the round was submitted with the
            # same answers: nothing to do, and nothing to complain about.
            return round_view(assignment, round_)
        assignment = _writable(assignment, now)
        _check_is_current(assignment, round_)
        if round_.served_at is None:
            raise Conflict("This round has not been shown yet. Reload the page.")
        _apply_answers(round_, assignment.campaign, answers)
    return round_view(assignment, round_)


def _already_given(round_: Round, answers: list[Answer]) -> bool:
    sources = [candidate_id for candidate_id, _ in _round_sources(round_)]
    judgments = {
        judgment.candidate_id: judgment for judgment in round_.judgments.select_related("label")
    }
    for answer in answers:
        if not 1 <= answer.index <= len(sources):
            return False
        judgment = judgments.get(sources[answer.index - 1])
        if judgment is None:
            return False
        if answer.is_valid is not None and answer.is_valid != judgment.is_valid:
            return False
        if answer.label is not None and (
            judgment.label is None or judgment.label.value != answer.label
        ):
            return False
    return True


# --- Submitting ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class SubmitOutcome:
    """Where the worker goes next. The same for a first submit and any replay of it."""

    assignment: Assignment
    submitted_position: int
    next_position: int | None  # None: the assignment is complete
    show_feedback: bool  # a training round: its feedback page comes first


def _outcome(assignment: Assignment, round_: Round) -> SubmitOutcome:
    following = assignment.rounds.filter(position__gt=round_.position).order_by("position").first()
    return SubmitOutcome(
        assignment=assignment,
        submitted_position=round_.position,
        next_position=following.position if following else None,
        show_feedback=round_.kind == RoundKind.TRAINING,
    )


def _missing(view: RoundView) -> dict[str, list[str]]:
    missing = {}
    for item in view.items:
        if item.is_valid is None:
            missing[f"valid-{item.index}"] = ["Choose Valid or Invalid."]
        if item.label_id is None:
            missing[f"label-{item.index}"] = ["Choose a label."]
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
    assignment_expire(assignment_id=assignment.id, now=now)
    with transaction.atomic():
        locked = (
            Assignment.objects.select_for_update(of=("self",))
            .select_related("campaign")
            .get(id=assignment.id)
        )
        round_ = _round_at(locked, position)
        if round_.submitted_at is not None:
            return _outcome(locked, round_)  # a double submit or a replay
        raise_if_expired(locked)
        locked = assignment_lock(assignment_id=assignment.id, now=now)
        _check_is_current(locked, round_)
        if round_.served_at is None:
            raise Conflict("This round has not been shown yet. Reload the page.")
        _apply_answers(round_, locked.campaign, list(answers))
        missing = _missing(round_view(locked, round_))
        if not missing:
            return _submit(locked, round_, now)
    # Outside the transaction: the answers given so far stay saved.
    raise InvalidInput(
        "Answer every counterfactual before submitting: Valid or Invalid, and a label.",
        fields=missing,
    )


def _submit(locked: Assignment, round_: Round, now: datetime) -> SubmitOutcome:
    """Mark the round submitted, in the caller's transaction; the last one ends the assignment."""
    round_.submitted_at = now
    round_.save(update_fields=["submitted_at"])
    # Quality control catches up once the round is committed (C.2 filters, the vote).
    transaction.on_commit(partial(quality_after_round_safely, round_.id))
    if round_.kind == RoundKind.REAL:
        LabelingUnit.objects.filter(id=round_.unit_id).update(completed=F("completed") + 1)
    if current_round(locked) is None:
        locked.state = AssignmentState.SUBMITTED
        locked.submitted_at = now
        locked.completion_code = completion_code()
        locked.save(update_fields=["state", "submitted_at", "completion_code"])
    return _outcome(locked, round_)
