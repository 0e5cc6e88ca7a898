"""The database itself refuses states that would lose or duplicate paid work."""

import pytest
from django.db import IntegrityError, transaction
from django.utils import timezone

from cfannotate.labeling.models import GoldKind, GoldRound, Judgment, Round, RoundKind
from tests.factories import make_assignment, make_original, make_unit, make_worker


@pytest.fixture
def unit(campaign):
    return make_unit(make_original(campaign), judgments_needed=2)


def _integrity_error(callable_):
    with pytest.raises(IntegrityError), transaction.atomic():
        callable_()


def test_unit_cannot_be_claimed_beyond_k(unit):
    unit.claims = 2
    unit.save()
    unit.claims = 3
    _integrity_error(unit.save)


def test_unit_cannot_complete_more_than_it_claimed(unit):
    unit.claims, unit.completed = 1, 2
    _integrity_error(unit.save)


def test_worker_never_gets_the_same_unit_twice(campaign, unit):
    worker = make_worker()
    first = make_assignment(campaign, worker, state="submitted", submitted_at=timezone.now())
    second = make_assignment(campaign, worker)
    Round.objects.create(
        assignment=first, worker=worker, kind=RoundKind.REAL, position=1, unit=unit
    )
    _integrity_error(
        lambda: Round.objects.create(
            assignment=second, worker=worker, kind=RoundKind.REAL, position=1, unit=unit
        )
    )


def test_two_workers_may_share_a_unit(campaign, unit):
    for _ in range(2):
        worker = make_worker()
        Round.objects.create(
            assignment=make_assignment(campaign, worker),
            worker=worker,
            kind=RoundKind.REAL,
            position=1,
            unit=unit,
        )
    assert unit.rounds.count() == 2


def test_worker_never_sees_a_gold_round_twice_but_may_redo_training(campaign):
    original = make_original(campaign)
    gold = GoldRound.objects.create(campaign=campaign, original=original, kind=GoldKind.GOLD)
    training = GoldRound.objects.create(
        campaign=campaign, original=original, kind=GoldKind.TRAINING
    )
    worker = make_worker()
    first = make_assignment(campaign, worker, state="submitted", submitted_at=timezone.now())
    second = make_assignment(campaign, worker)
    for assignment in (first, second):
        Round.objects.create(
            assignment=assignment,
            worker=worker,
            kind=RoundKind.TRAINING,
            position=0,
            gold_round=training,
        )
    Round.objects.create(
        assignment=first, worker=worker, kind=RoundKind.GOLD, position=3, gold_round=gold
    )
    _integrity_error(
        lambda: Round.objects.create(
            assignment=second, worker=worker, kind=RoundKind.GOLD, position=3, gold_round=gold
        )
    )


def test_a_round_has_exactly_one_source(campaign, unit):
    assignment = make_assignment(campaign)
    gold = GoldRound.objects.create(campaign=campaign, original=unit.original)
    _integrity_error(
        lambda: Round.objects.create(
            assignment=assignment, worker=assignment.worker, kind=RoundKind.REAL, position=1
        )
    )
    _integrity_error(
        lambda: Round.objects.create(
            assignment=assignment,
            worker=assignment.worker,
            kind=RoundKind.REAL,
            position=1,
            unit=unit,
            gold_round=gold,
        )
    )
    _integrity_error(
        lambda: Round.objects.create(
            assignment=assignment,
            worker=assignment.worker,
            kind=RoundKind.GOLD,
            position=1,
            unit=unit,
        )
    )


def test_round_positions_are_unique_within_an_assignment(campaign, unit):
    assignment = make_assignment(campaign)
    other = make_unit(make_original(campaign))
    Round.objects.create(
        assignment=assignment, worker=assignment.worker, kind=RoundKind.REAL, position=1, unit=unit
    )
    _integrity_error(
        lambda: Round.objects.create(
            assignment=assignment,
            worker=assignment.worker,
            kind=RoundKind.REAL,
            position=1,
            unit=other,
        )
    )


def test_submission_cannot_precede_serving(campaign, unit):
    assignment = make_assignment(campaign)
    now = timezone.now()
    _integrity_error(
        lambda: Round.objects.create(
            assignment=assignment,
            worker=assignment.worker,
            kind=RoundKind.REAL,
            position=1,
            unit=unit,
            served_at=now,
            submitted_at=now - timezone.timedelta(seconds=1),
        )
    )
    _integrity_error(
        lambda: Round.objects.create(
            assignment=assignment,
            worker=assignment.worker,
            kind=RoundKind.REAL,
            position=1,
            unit=unit,
            submitted_at=now,
        )
    )


def test_one_judgment_per_candidate_per_round(campaign, unit):
    assignment = make_assignment(campaign)
    round_ = Round.objects.create(
        assignment=assignment, worker=assignment.worker, kind=RoundKind.REAL, position=1, unit=unit
    )
    candidate = unit.items.first().candidate
    Judgment.objects.create(round=round_, candidate=candidate)
    _integrity_error(lambda: Judgment.objects.create(round=round_, candidate=candidate))


def test_one_active_assignment_per_worker_and_campaign(campaign):
    worker = make_worker()
    make_assignment(campaign, worker)
    _integrity_error(lambda: make_assignment(campaign, worker))
    make_assignment(campaign, make_worker())


def test_platform_assignment_ids_are_unique_per_campaign(campaign):
    make_assignment(campaign, platform_assignment_id="3ABC")
    _integrity_error(lambda: make_assignment(campaign, platform_assignment_id="3ABC"))
    # Empty ids (invitation links) never collide.
    make_assignment(campaign)
    make_assignment(campaign)


def test_seconds_taken_is_measured_between_server_times(campaign, unit):
    assignment = make_assignment(campaign)
    served = timezone.now()
    round_ = Round(
        assignment=assignment,
        worker=assignment.worker,
        kind=RoundKind.REAL,
        position=1,
        unit=unit,
        served_at=served,
        submitted_at=served + timezone.timedelta(seconds=31.5),
    )
    assert round_.seconds_taken == pytest.approx(31.5)
    assert Round(served_at=served).seconds_taken is None


def test_paid_work_protects_the_campaign_from_deletion(campaign):
    from django.db.models import ProtectedError

    make_assignment(campaign)
    with pytest.raises(ProtectedError):
        campaign.delete()
