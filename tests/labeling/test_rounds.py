from datetime import timedelta

import pytest
from django.utils import timezone

from cfannotate.core.exceptions import Conflict, Expired, Forbidden, InvalidInput, NotFound
from cfannotate.core.worker_tokens import assignment_token
from cfannotate.labeling import rounds
from cfannotate.labeling.models import AssignmentState, Judgment, LabelingUnit, RoundKind

pytestmark = pytest.mark.django_db


def _answers(view, valid=True, label="positive"):
    return [rounds.Answer(index=item.index, is_valid=valid, label=label) for item in view.items]


def _finish(assignment, position, now=None):
    view = rounds.round_serve(assignment=assignment, position=position, now=now)
    return rounds.round_submit(
        assignment=assignment, position=position, answers=_answers(view), now=now
    )


def test_the_token_opens_its_own_assignment_only(assignment):
    token = assignment_token(assignment_id=assignment.id, nonce=assignment.token_nonce)
    assert rounds.assignment_from_token(token).id == assignment.id
    revoked = assignment_token(assignment_id=assignment.id, nonce="old-nonce")
    with pytest.raises(Forbidden):
        rounds.assignment_from_token(revoked)


def test_serving_starts_the_clock_once_and_a_reload_keeps_it(assignment):
    start = timezone.now()
    rounds.round_serve(assignment=assignment, position=1, now=start)
    rounds.round_serve(assignment=assignment, position=1, now=start + timedelta(seconds=30))
    round_ = assignment.rounds.get(position=1)
    assert round_.served_at == start
    assert Judgment.objects.filter(round=round_).count() == 3


def test_time_per_round_is_measured_on_the_server(assignment):
    start = timezone.now()
    _finish(assignment, 1, now=start)
    view = rounds.round_serve(assignment=assignment, position=2, now=start + timedelta(seconds=5))
    rounds.round_submit(
        assignment=assignment,
        position=2,
        answers=_answers(view),
        now=start + timedelta(seconds=47),
    )
    assert assignment.rounds.get(position=2).seconds_taken == 42.0


def test_clicks_are_saved_and_come_back(assignment):
    rounds.round_serve(assignment=assignment, position=1)
    rounds.judgment_save(
        assignment=assignment, position=1, answers=[rounds.Answer(index=2, is_valid=False)]
    )
    rounds.judgment_save(
        assignment=assignment, position=1, answers=[rounds.Answer(index=2, label="negative")]
    )
    again = rounds.round_serve(assignment=assignment, position=1)
    item = again.items[1]
    assert item.is_valid is False and item.label_id is not None and item.complete
    assert not again.items[0].complete


def test_an_incomplete_submit_is_refused_and_keeps_what_was_given(assignment):
    rounds.round_serve(assignment=assignment, position=1)
    with pytest.raises(InvalidInput) as raised:
        rounds.round_submit(
            assignment=assignment,
            position=1,
            answers=[rounds.Answer(index=1, is_valid=True, label="positive")],
        )
    assert set(raised.value.fields) == {"valid-2", "label-2", "valid-3", "label-3"}
    view = rounds.round_serve(assignment=assignment, position=1)
    assert view.items[0].complete
    assert assignment.rounds.get(position=1).submitted_at is None


def test_a_double_submit_returns_the_same_outcome_and_changes_nothing(assignment):
    first = _finish(assignment, 1)
    replay = rounds.round_submit(
        assignment=assignment,
        position=1,
        answers=[rounds.Answer(index=1, is_valid=False, label="negative")],
    )
    assert (replay.next_position, replay.show_feedback) == (first.next_position, True)
    judgment = Judgment.objects.filter(round__assignment=assignment, round__position=1).first()
    assert judgment.is_valid is True and judgment.label.value == "positive"


def test_out_of_order_requests_get_a_clear_conflict(assignment):
    with pytest.raises(Conflict, match="comes later"):
        rounds.round_serve(assignment=assignment, position=3)
    with pytest.raises(Conflict, match="comes later"):
        rounds.round_submit(assignment=assignment, position=3, answers=[])
    with pytest.raises(NotFound):
        rounds.round_serve(assignment=assignment, position=99)
    _finish(assignment, 1)
    with pytest.raises(Conflict, match="already submitted"):
        rounds.judgment_save(
            assignment=assignment, position=1, answers=[rounds.Answer(index=1, is_valid=False)]
        )
    # A save that arrives late with the answers the round was submitted with is harmless.
    late = rounds.judgment_save(
        assignment=assignment, position=1, answers=[rounds.Answer(index=1, is_valid=True)]
    )
    assert late.items[0].is_valid is True


def test_tampered_answers_are_refused(assignment):
    rounds.round_serve(assignment=assignment, position=1)
    with pytest.raises(InvalidInput, match="no item 4"):
        rounds.judgment_save(
            assignment=assignment, position=1, answers=[rounds.Answer(index=4, is_valid=True)]
        )
    with pytest.raises(InvalidInput, match="not a label"):
        rounds.judgment_save(
            assignment=assignment, position=1, answers=[rounds.Answer(index=1, label="gold")]
        )
    with pytest.raises(InvalidInput):
        rounds.parse_valid("maybe", field="valid-1")


def test_a_whole_assignment_ends_with_a_completion_code(assignment):
    positions = list(assignment.rounds.order_by("position").values_list("position", flat=True))
    outcomes = [_finish(assignment, position) for position in positions]
    assert outcomes[-1].next_position is None
    assignment.refresh_from_db()
    assert assignment.state == AssignmentState.SUBMITTED and len(assignment.completion_code) == 8
    units = LabelingUnit.objects.filter(rounds__assignment=assignment)
    assert set(units.values_list("completed", flat=True)) == {1}
    assert rounds.current_round(assignment) is None


def test_an_expired_assignment_refuses_writes_but_keeps_submitted_rounds(assignment):
    _finish(assignment, 1)
    rounds.round_serve(assignment=assignment, position=2)
    later = timezone.now() + timedelta(minutes=assignment.campaign.lease_minutes + 1)
    with pytest.raises(Expired, match="expired"):
        rounds.judgment_save(
            assignment=assignment,
            position=2,
            answers=[rounds.Answer(index=1, is_valid=True)],
            now=later,
        )
    # A replay of a round submitted before expiry still gets its outcome.
    assert rounds.round_submit(assignment=assignment, position=1, now=later).submitted_position == 1
    assert assignment.rounds.get(position=1).submitted_at is not None


def test_activity_renews_the_lease(assignment):
    start = timezone.now()
    lease = timedelta(minutes=assignment.campaign.lease_minutes)
    rounds.round_serve(assignment=assignment, position=1, now=start + lease * 0.9)
    rounds.judgment_save(
        assignment=assignment,
        position=1,
        answers=[rounds.Answer(index=1, is_valid=True)],
        now=start + lease * 1.5,
    )
    assignment.refresh_from_db()
    assert assignment.state == AssignmentState.ACTIVE


def test_training_feedback_only_after_submission(assignment):
    training = assignment.rounds.get(kind=RoundKind.TRAINING)
    with pytest.raises(Conflict):
        rounds.training_feedback(assignment, training)
    view = rounds.round_serve(assignment=assignment, position=training.position)
    rounds.round_submit(
        assignment=assignment,
        position=training.position,
        answers=[
            rounds.Answer(index=1, is_valid=True, label="positive"),
            *_answers(view, valid=False, label="negative")[1:],
        ],
    )
    training.refresh_from_db()
    feedback = rounds.training_feedback(assignment, training)
    assert [item.correct for item in feedback] == [True, False, False]
    assert feedback[0].explanation.startswith("Known answer")


def test_gold_and_real_rounds_show_the_same_fields(assignment):
    gold = assignment.rounds.get(kind=RoundKind.GOLD)
    real = assignment.rounds.filter(kind=RoundKind.REAL).first()
    gold_view = rounds.round_view(assignment, gold)
    real_view = rounds.round_view(assignment, real)
    assert not gold_view.is_training and not real_view.is_training
    assert type(gold_view.items[0]) is type(real_view.items[0]) is rounds.ItemView
    assert gold_view.total == real_view.total == 4


def test_labels_an_admin_renames_show_on_the_next_request(assignment):
    """Labels are cached per campaign version: saving the campaign (as the admin does
    with its label inline) makes the next request read them again, the original's
    label included."""
    first = rounds.round_serve(assignment=assignment, position=1)
    label = assignment.campaign.labels.get(id=first.original_label.id)
    assert label.display_name != "Upbeat"
    label.display_name = "Upbeat"
    label.save()
    assignment.campaign.save()
    again = rounds.round_serve(assignment=assignment, position=1)
    assert "Upbeat" in [label.display_name for label in again.labels]
    assert again.original_label.display_name == "Upbeat"


def test_a_unit_without_counterfactuals_shows_its_original_alone(assignment_gold_last):
    assignment = assignment_gold_last
    _finish(assignment, 1)
    round_ = assignment.rounds.get(position=2)
    assert round_.kind == RoundKind.REAL
    round_.unit.items.all().delete()
    view = rounds.round_serve(assignment=assignment, position=2)
    assert view.items == [] and view.original_text == round_.unit.original.text
