import random
from datetime import timedelta

import pytest
from django.db.models import Count
from django.utils import timezone

from cfannotate.campaigns.models import CampaignStatus
from cfannotate.core.exceptions import Conflict
from cfannotate.labeling.assignments import (
    NoWorkLeft,
    assignment_return,
    assignment_start,
    assignments_expire,
)
from cfannotate.labeling.models import AssignmentState, LabelingUnit, Round, RoundKind
from tests.factories import make_labeling_campaign, make_worker

pytestmark = pytest.mark.django_db


def _kinds(assignment):
    return list(assignment.rounds.order_by("position").values_list("kind", flat=True))


def test_an_assignment_is_training_then_real_rounds_with_hidden_gold_mixed_in():
    campaign = make_labeling_campaign(units=30, gold=3)
    assignment = assignment_start(campaign=campaign, worker=make_worker())
    kinds = _kinds(assignment)
    assert len(kinds) == 1 + 20 + 2
    assert kinds[0] == RoundKind.TRAINING
    assert kinds[1:].count(RoundKind.REAL) == 20 and kinds[1:].count(RoundKind.GOLD) == 2
    assert list(assignment.rounds.values_list("position", flat=True).order_by("position")) == list(
        range(1, 24)
    )
    claimed = LabelingUnit.objects.filter(campaign=campaign, claims=1).count()
    assert claimed == 20


def test_gold_positions_are_random():
    campaign = make_labeling_campaign(units=60, gold=6, k=3)
    positions = set()
    for seed in range(6):
        assignment = assignment_start(
            campaign=campaign, worker=make_worker(), rng=random.Random(seed)
        )
        positions.add(
            tuple(assignment.rounds.filter(kind=RoundKind.GOLD).values_list("position", flat=True))
        )
    assert len(positions) > 1


def test_settings_decide_the_shape():
    campaign = make_labeling_campaign(
        units=10,
        gold=2,
        training=2,
        rounds_per_assignment=4,
        gold_rounds_per_assignment=1,
        training_rounds=2,
    )
    kinds = _kinds(assignment_start(campaign=campaign, worker=make_worker()))
    assert kinds[:2] == [RoundKind.TRAINING] * 2
    assert kinds[2:].count(RoundKind.REAL) == 4 and kinds[2:].count(RoundKind.GOLD) == 1


def test_a_returning_worker_resumes_the_same_assignment():
    campaign = make_labeling_campaign()
    worker = make_worker()
    first = assignment_start(campaign=campaign, worker=worker)
    assert assignment_start(campaign=campaign, worker=worker).id == first.id
    assert LabelingUnit.objects.filter(claims__gt=0).count() == 20


def test_a_campaign_not_open_for_labeling_refuses_new_assignments():
    campaign = make_labeling_campaign()
    campaign.status = CampaignStatus.PAUSED
    campaign.save()
    with pytest.raises(Conflict, match="not open for labeling"):
        assignment_start(campaign=campaign, worker=make_worker())


def test_no_unit_is_handed_out_beyond_k():
    campaign = make_labeling_campaign(units=3, k=2, rounds_per_assignment=3)
    first = assignment_start(campaign=campaign, worker=make_worker())
    second = assignment_start(campaign=campaign, worker=make_worker())
    with pytest.raises(NoWorkLeft, match="no work left"):
        assignment_start(campaign=campaign, worker=make_worker())
    assert first.rounds.filter(kind=RoundKind.REAL).count() == 3
    assert second.rounds.filter(kind=RoundKind.REAL).count() == 3
    assert set(LabelingUnit.objects.values_list("claims", flat=True)) == {2}


def test_a_short_pool_gives_a_shorter_assignment():
    campaign = make_labeling_campaign(units=5)
    assignment = assignment_start(campaign=campaign, worker=make_worker())
    assert assignment.rounds.filter(kind=RoundKind.REAL).count() == 5


def test_expired_leases_return_units_and_the_worker_never_gets_them_again():
    campaign = make_labeling_campaign(units=4, k=1, rounds_per_assignment=4)
    worker = make_worker()
    abandoned = assignment_start(campaign=campaign, worker=worker)
    with pytest.raises(NoWorkLeft):
        assignment_start(campaign=campaign, worker=make_worker())

    later = timezone.now() + timedelta(minutes=campaign.lease_minutes + 1)
    assert assignments_expire(campaign=campaign, now=later) == 1
    abandoned.refresh_from_db()
    assert abandoned.state == AssignmentState.EXPIRED
    assert set(LabelingUnit.objects.values_list("claims", flat=True)) == {0}
    # Someone else gets the units; the worker who abandoned them does not.
    other = assignment_start(campaign=campaign, worker=make_worker(), now=later)
    assert other.rounds.filter(kind=RoundKind.REAL).count() == 4
    with pytest.raises(NoWorkLeft):
        assignment_start(campaign=campaign, worker=worker, now=later)


def test_expiry_only_touches_stale_assignments():
    campaign = make_labeling_campaign(units=10)
    assignment_start(campaign=campaign, worker=make_worker())
    assert assignments_expire(campaign=campaign) == 0
    assert LabelingUnit.objects.filter(claims=1).count() == 10


def test_a_returned_assignment_gives_its_units_back_at_once():
    campaign = make_labeling_campaign(units=3, k=1, rounds_per_assignment=3)
    assignment = assignment_start(campaign=campaign, worker=make_worker())
    assignment_return(assignment=assignment)
    assert set(LabelingUnit.objects.values_list("claims", flat=True)) == {0}
    with pytest.raises(Conflict):
        assignment_return(assignment=assignment)


def test_a_worker_never_sees_a_gold_round_twice():
    campaign = make_labeling_campaign(units=60, gold=3, k=1, rounds_per_assignment=5)
    worker = make_worker()
    later = timezone.now()
    seen = []
    for _ in range(3):
        assignment = assignment_start(campaign=campaign, worker=worker, now=later)
        seen += list(
            assignment.rounds.filter(kind=RoundKind.GOLD).values_list("gold_round_id", flat=True)
        )
        later += timedelta(minutes=campaign.lease_minutes + 1)
        assignments_expire(campaign=campaign, now=later)
    assert len(seen) == len(set(seen)) == 3  # then the gold pool is used up for this worker
    repeats = Round.objects.filter(kind=RoundKind.GOLD).values("worker", "gold_round")
    assert not repeats.annotate(n=Count("id")).filter(n__gt=1).exists()


def test_a_platform_assignment_id_starts_one_assignment_only():
    campaign = make_labeling_campaign(units=30)
    worker = make_worker()
    first = assignment_start(campaign=campaign, worker=worker, platform_assignment_id="A1")
    assignment_return(assignment=first)
    with pytest.raises(Conflict, match="already used"):
        assignment_start(campaign=campaign, worker=worker, platform_assignment_id="A1")


def test_no_work_says_come_back_when_other_workers_hold_the_last_units():
    campaign = make_labeling_campaign(units=2, k=1, rounds_per_assignment=2, lease_minutes=30)
    now = timezone.now()
    assignment_start(campaign=campaign, worker=make_worker(), now=now)
    with pytest.raises(NoWorkLeft) as caught:
        assignment_start(campaign=campaign, worker=make_worker(), now=now + timedelta(minutes=10))
    assert caught.value.title == "No work right now"
    assert "other workers are doing the last rounds" in caught.value.message
    # The holder's lease ends 20 minutes later: that is when their rounds may come back.
    assert caught.value.come_back == (
        "If some of them stop, their rounds come back: try again in about 20 minutes."
    )


def test_no_work_says_there_is_no_need_to_come_back_when_everything_is_done():
    campaign = make_labeling_campaign(units=2, k=1)
    LabelingUnit.objects.filter(campaign=campaign).update(claims=1, completed=1)
    with pytest.raises(NoWorkLeft) as caught:
        assignment_start(campaign=campaign, worker=make_worker())
    assert caught.value.message.startswith("There is no work left in this task for you.")
    assert caught.value.come_back.startswith("There is no need to come back")


@pytest.mark.parametrize(
    ("status", "said", "come_back"),
    [
        (CampaignStatus.PAUSED, "not open for labeling right now", "Come back later"),
        (CampaignStatus.REVIEW, "not open for labeling yet", "Come back later"),
        (CampaignStatus.FINISHED, "This task is finished", "There is no need to come back"),
    ],
)
def test_a_closed_campaign_says_whether_to_come_back(status, said, come_back):
    campaign = make_labeling_campaign()
    campaign.status = status
    campaign.save()
    with pytest.raises(NoWorkLeft, match=said) as caught:
        assignment_start(campaign=campaign, worker=make_worker())
    assert caught.value.come_back.startswith(come_back)
    assert not caught.value.message.endswith("..") and not caught.value.come_back.endswith("..")
