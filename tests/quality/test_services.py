"""Quality control through the real labeling path: C.2 verdicts, the vote, re-queues."""

import random
from datetime import timedelta

import pytest
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from cfannotate.labeling.assignments import NoWorkLeft, assignment_start, assignments_expire
from cfannotate.labeling.models import GoldKind, GoldRound, LabelingUnit
from cfannotate.labeling.rounds import Answer, round_serve, round_submit
from cfannotate.labeling.services import labeling_open, labeling_pause
from cfannotate.quality.models import AggregatedLabel, WorkerDecision, WorkerQuality
from cfannotate.quality.services import (
    candidates_aggregate,
    quality_refresh,
    units_requeue,
    workers_assess,
)
from cfannotate.quality.tasks import assess_assignment, sweep_labeling, sweep_schedule
from tests.factories import make_gold_round, make_labeling_campaign, make_worker
from tests.quality.conftest import START, work


def quality_of(campaign, worker) -> WorkerQuality:
    return WorkerQuality.objects.get(campaign=campaign, worker=worker)


@pytest.fixture
def ten_units(db):
    return make_labeling_campaign(
        units=10, gold=2, training=1, rounds_per_assignment=4, gold_rounds_per_assignment=2
    )


def test_the_c2_rules_on_workers_who_labeled_through_the_worker_path(ten_units):
    careful, _ = work(ten_units, seconds=30, gold_right=6)
    exactly_18, _ = work(ten_units, seconds=18, gold_right=5)
    four_of_six, _ = work(ten_units, seconds=20, gold_right=4)
    fast_perfect, _ = work(ten_units, seconds=5, gold_right=6)
    three_of_six, _ = work(ten_units, seconds=60, gold_right=3)

    summary = quality_refresh(campaign=ten_units)

    assert summary.workers == 5 and summary.qualified == 3
    assert quality_of(ten_units, careful).qualified
    assert quality_of(ten_units, four_of_six).qualified
    assert quality_of(ten_units, fast_perfect).qualified
    slow_reader = quality_of(ten_units, exactly_18)
    assert not slow_reader.qualified
    assert slow_reader.median_seconds == 18.0  # measured on the server, training excluded
    assert slow_reader.reasons == ["median 18.0 s per round is not above 18 s"]
    guesser = quality_of(ten_units, three_of_six)
    assert (guesser.gold_correct, guesser.gold_total, guesser.qualified) == (3, 6, False)
    assert all(quality.settled for quality in WorkerQuality.objects.all())


def test_one_valid_and_one_invalid_vote_that_agree_are_kept(ten_units):
    work(ten_units, real=lambda _: (True, "negative"))
    work(ten_units, real=lambda _: (False, "negative"))
    quality_refresh(campaign=ten_units)

    aggregates = AggregatedLabel.objects.filter(candidate__campaign=ten_units)
    assert aggregates.count() == 12  # 4 units of 3, each judged twice
    for aggregate in aggregates:
        assert aggregate.kept and aggregate.is_valid
        assert aggregate.label.value == "negative"
        assert (aggregate.votes, aggregate.qualified_votes, aggregate.agreement) == (2, 2, 1.0)
        # The votes themselves: every campaign label, and how many called it valid.
        assert aggregate.label_votes == {"negative": 2, "positive": 0}
        assert aggregate.valid_votes == 1


def test_votes_that_disagree_are_requeued_and_a_third_vote_settles_them(ten_units):
    first, _ = work(ten_units, real=lambda _: (True, "negative"))
    work(ten_units, real=lambda _: (True, "positive"))
    summary = quality_refresh(campaign=ten_units)

    aggregates = AggregatedLabel.objects.filter(candidate__campaign=ten_units)
    assert not aggregates.filter(kept=True).exists()
    assert aggregates.filter(needs_more=True).count() == 12
    assert summary.requeued_units == 4
    disputed = LabelingUnit.objects.filter(rounds__worker=first).distinct()
    assert {(u.judgments_needed, u.requeues) for u in disputed} == {(3, 1)}

    # The third worker is served exactly the disputed units first (they are open again).
    third, _ = work(ten_units, real=lambda _: (True, "negative"))
    assert set(LabelingUnit.objects.filter(rounds__worker=third)) == set(disputed)
    quality_refresh(campaign=ten_units)
    for aggregate in AggregatedLabel.objects.filter(candidate__campaign=ten_units):
        assert aggregate.kept and aggregate.label.value == "negative"
        assert aggregate.agreement == pytest.approx(2 / 3)


def test_requeues_stop_at_the_cap(db):
    campaign = make_labeling_campaign(
        units=4, gold=2, rounds_per_assignment=4, gold_rounds_per_assignment=2, max_requeues=1
    )
    work(campaign, real=lambda _: (True, "negative"))
    work(campaign, real=lambda _: (True, "positive"))
    assert quality_refresh(campaign=campaign).requeued_units == 4
    # The extra judgment comes from a worker the filter removes: their round is replaced
    # outside the cap (one more judgment needed), but no further re-queue for the dispute.
    work(campaign, seconds=5, gold_right=1, real=lambda _: (True, "positive"))
    assert quality_refresh(campaign=campaign).requeued_units == 0
    assert AggregatedLabel.objects.filter(candidate__campaign=campaign, needs_more=True).count()
    units = LabelingUnit.objects.filter(campaign=campaign)
    assert {(u.judgments_needed, u.requeues, u.completed) for u in units} == {(4, 1, 3)}


def test_votes_of_filtered_workers_do_not_count_and_their_rounds_are_replaced(ten_units):
    work(ten_units, real=lambda _: (True, "negative"))
    work(ten_units, seconds=5, gold_right=2, real=lambda _: (True, "positive"))  # filtered
    quality_refresh(campaign=ten_units)

    aggregate = AggregatedLabel.objects.filter(candidate__campaign=ten_units).first()
    assert (aggregate.votes, aggregate.qualified_votes, aggregate.kept) == (2, 1, False)
    assert aggregate.needs_more
    # One judgment more for each unit the filtered worker held, not counted as a re-queue.
    units = LabelingUnit.objects.filter(campaign=ten_units, judgments_needed=3)
    assert units.count() == 4
    assert {u.requeues for u in units} == {0}


def test_a_unit_waits_for_the_verdict_of_every_worker_who_judged_it(ten_units):
    first, _ = work(ten_units, real=lambda _: (True, "negative"))
    second, _ = work(ten_units, real=lambda _: (True, "positive"))
    workers_assess(campaign=ten_units, worker_ids=[first.id])
    candidates_aggregate(campaign=ten_units)
    assert units_requeue(campaign=ten_units) == 0  # the second worker has no verdict yet
    workers_assess(campaign=ten_units, worker_ids=[second.id])
    assert units_requeue(campaign=ten_units) == 4


def test_a_worker_who_comes_back_for_more_does_not_hold_up_requeues(ten_units):
    # Crowdworkers take assignment after assignment; the units of their earlier ones go
    # back on the queue as soon as their verdicts are in (this stalled labeling before).
    work(ten_units, real=lambda _: (True, "negative"))
    second, _ = work(ten_units, real=lambda _: (True, "positive"))
    assignment_start(campaign=ten_units, worker=second)
    assert quality_refresh(campaign=ten_units).requeued_units == 4
    assert not quality_of(ten_units, second).settled


IMMEDIATE_TASKS = {
    "default": {
        "BACKEND": "django_tasks.backends.immediate.ImmediateBackend",
        "QUEUES": ["default", "generation"],
    }
}


def test_quality_runs_in_the_background_once_an_assignment_ends(
    ten_units, settings, django_capture_on_commit_callbacks
):
    settings.TASKS = IMMEDIATE_TASKS  # the task runs as soon as it is queued
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        worker, _ = work(ten_units, real=lambda _: (True, "negative"))
    # Two tasks per assignment: once its gold is all answered (a verdict early), and once
    # its last round is submitted.
    assert len(callbacks) == 2
    assert quality_of(ten_units, worker).qualified
    assert quality_of(ten_units, worker).settled
    with django_capture_on_commit_callbacks(execute=True):
        work(ten_units, real=lambda _: (True, "positive"))
    # The second worker's assignment re-voted the shared units and re-queued them.
    assert AggregatedLabel.objects.filter(candidate__campaign=ten_units, needs_more=True).count()
    assert LabelingUnit.objects.filter(campaign=ten_units, requeues=1).count() == 4


def test_submitting_a_real_round_queues_nothing(ten_units, django_capture_on_commit_callbacks):
    assignment = assignment_start(campaign=ten_units, worker=make_worker())
    view = round_serve(assignment=assignment, position=1)
    answers = [Answer(index=item.index, is_valid=True, label="positive") for item in view.items]
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        round_submit(assignment=assignment, position=1, answers=answers)
    assert callbacks == []
    assert not DBTaskResult.objects.exists()
    assert not WorkerQuality.objects.exists()


def test_an_expired_assignment_is_assessed_too(ten_units, django_capture_on_commit_callbacks):
    work(ten_units, real=lambda _: (True, "negative"))  # someone who finished
    quitter = make_worker()
    started = assignment_start(campaign=ten_units, worker=quitter, now=START)
    view = round_serve(assignment=started, position=1, now=START)  # the training round
    answers = [Answer(index=item.index, is_valid=True, label="positive") for item in view.items]
    round_submit(assignment=started, position=1, answers=answers, now=START)
    later = START + timedelta(minutes=ten_units.lease_minutes + 1)
    with django_capture_on_commit_callbacks(execute=True):
        assert assignments_expire(campaign=ten_units, now=later) == 1
    queued = DBTaskResult.objects.get()  # the database queue holds it for a db_worker
    assert queued.task_path == "cfannotate.quality.tasks.assess_assignment"
    assert queued.args_kwargs["args"] == [started.id]
    assess_assignment.call(started.id)  # what the db_worker runs
    assert WorkerQuality.objects.filter(worker=quitter).exists()


def test_estimates_are_reported_beside_the_vote_when_k_is_above_two(db):
    campaign = make_labeling_campaign(
        units=2, gold=2, k=3, rounds_per_assignment=2, gold_rounds_per_assignment=2
    )
    for label in ("negative", "negative", "positive"):
        work(campaign, real=lambda _, label=label: (True, label))
    quality_refresh(campaign=campaign)
    for aggregate in AggregatedLabel.objects.filter(candidate__campaign=campaign):
        assert aggregate.ds_label.value == "negative"
        assert 0.5 < aggregate.ds_confidence <= 1.0
        # GLAD and MACE (crowd-kit) beside it
        assert aggregate.glad_label.value == aggregate.mace_label.value == "negative"
        # Two of three agree: with K = 3 the vote wants three agreeing votes.
        assert not aggregate.kept and aggregate.needs_more


def test_a_worker_who_always_gives_one_label_is_filtered_by_the_distribution(db):
    campaign = make_labeling_campaign(
        units=12, gold=2, rounds_per_assignment=4, gold_rounds_per_assignment=2
    )
    answers = iter([True, False] * 100)

    def balanced(_):
        return True, "positive" if next(answers) else "negative"

    honest = [work(campaign, real=balanced)[0] for _ in range(4)]
    one_label, _ = work(campaign, real=lambda _: (True, "positive"))
    quality_refresh(campaign=campaign)

    flagged = quality_of(campaign, one_label)
    assert not flagged.qualified  # gold all right, yet filtered by its labels
    assert flagged.gold_correct == flagged.gold_total == 6
    assert flagged.distribution_distance > campaign.label_distribution_threshold
    assert "label distribution differs" in flagged.reasons[0]
    assert all(quality_of(campaign, worker).qualified for worker in honest)


class LatestPlaces(random.Random):
    """Places every gold round as late as the assignment plan allows."""

    def randint(self, a, b):
        return b


def test_a_worker_who_fails_the_gold_is_stopped_early_and_their_units_go_to_others(
    settings, django_capture_on_commit_callbacks, db
):
    settings.TASKS = IMMEDIATE_TASKS
    campaign = make_labeling_campaign(
        units=10, gold=2, training=0, rounds_per_assignment=6, gold_rounds_per_assignment=2
    )
    spammer = make_worker()
    assignment = assignment_start(campaign=campaign, worker=spammer, now=START, rng=LatestPlaces(0))
    rounds = list(assignment.rounds.order_by("position"))
    kinds = [r.kind for r in rounds]
    # Gold goes no later than the middle of the real rounds (here, as late as it can).
    assert kinds == ["real"] * 3 + ["gold"] * 2 + ["real"] * 3
    last_gold = 5
    now = START
    with django_capture_on_commit_callbacks(execute=True):
        for round_ in rounds:
            if round_.position > last_gold:
                break
            view = round_serve(assignment=assignment, position=round_.position, now=now)
            now += timedelta(seconds=2)
            answers = [  # fast, and wrong on every gold counterfactual
                Answer(index=item.index, is_valid=False, label="negative") for item in view.items
            ]
            round_submit(assignment=assignment, position=round_.position, answers=answers, now=now)
    verdict = quality_of(campaign, spammer)
    assert not verdict.qualified
    # Served no more work: the rounds not shown yet are withdrawn, the assignment ended.
    assignment.refresh_from_db()
    assert assignment.state == "submitted" and assignment.completion_code
    assert assignment.rounds.filter(submitted_at__isnull=True).count() == 0
    with pytest.raises(NoWorkLeft, match="quality bar"):
        assignment_start(campaign=campaign, worker=spammer)
    # Units the spammer judged need one judgment more; the ones withdrawn are open again.
    judged = LabelingUnit.objects.filter(rounds__worker=spammer)
    assert judged.count() == 3
    assert all(unit.judgments_needed == 3 for unit in judged)
    assert LabelingUnit.objects.filter(campaign=campaign, claims=0).count() == 7


def test_the_sweep_requeues_without_anyone_asking_and_schedules_the_next(
    ten_units, django_capture_on_commit_callbacks
):
    work(ten_units, real=lambda _: (True, "negative"))
    work(ten_units, real=lambda _: (True, "positive"))  # their tasks wait in the queue
    sweep_labeling.call(ten_units.id)  # what the db_worker runs when the sweep is due
    assert LabelingUnit.objects.filter(campaign=ten_units, requeues=1).count() == 4
    sweeps = DBTaskResult.objects.filter(task_path="cfannotate.quality.tasks.sweep_labeling")
    assert sweeps.count() == 1 and sweeps.get().run_after > timezone.now()
    sweep_schedule(ten_units.id)
    assert sweeps.count() == 1  # one waiting sweep per campaign

    # A paused campaign ends the chain; opening it again starts one.
    sweeps.delete()
    labeling_pause(campaign=ten_units)
    sweep_labeling.call(ten_units.id)
    assert not sweeps.exists()
    with django_capture_on_commit_callbacks(execute=True):
        labeling_open(campaign=ten_units)
    assert sweeps.get().args_kwargs["args"] == [ten_units.id]


# --- Gold rounds of two (CAD's pairs): short of the share before 6 gold is a hold ---------


@pytest.fixture
def pair_gold(db):
    """Gold rounds of two counterfactuals: 4 gold an assignment, 8 in the campaign."""
    campaign = make_labeling_campaign(
        units=12, gold=0, training=0, rounds_per_assignment=4, gold_rounds_per_assignment=2
    )
    for _ in range(4):
        make_gold_round(campaign, GoldKind.GOLD, items=2)
    return campaign


def negative(_):
    return True, "negative"


def test_two_of_four_gold_holds_the_votes_and_the_next_gold_decides(
    pair_gold, settings, django_capture_on_commit_callbacks
):
    settings.TASKS = IMMEDIATE_TASKS  # quality runs in the labeling path, as deployed
    with django_capture_on_commit_callbacks(execute=True):
        worker, first = work(pair_gold, gold_right=2, real=negative)
    quality = quality_of(pair_gold, worker)
    assert (quality.qualified, quality.held_until, quality.gold_total) == (False, 6, 4)
    # Not stopped: every real round of the assignment was served and submitted.
    assert first.rounds.filter(kind="real", submitted_at__isnull=False).count() == 4
    # The votes wait, and the units get a replacement judgment meanwhile.
    theirs = AggregatedLabel.objects.filter(candidate__unit_item__unit__rounds__assignment=first)
    assert theirs.count() == 12 and not theirs.filter(qualified_votes__gt=0).exists()
    assert set(
        LabelingUnit.objects.filter(rounds__assignment=first).values_list(
            "judgments_needed", flat=True
        )
    ) == {3}
    decision = WorkerDecision.objects.get(assignment=first)
    assert decision.action == "approve" and decision.reason.startswith("Paid; labels wait")

    # The worker is given another assignment; its gold (all right) completes the sample.
    with django_capture_on_commit_callbacks(execute=True):
        work(
            pair_gold, worker=worker, gold_right=4, real=negative, start=START + timedelta(hours=1)
        )
    quality = quality_of(pair_gold, worker)
    assert (quality.qualified, quality.held_until) == (True, None)
    assert (quality.gold_correct, quality.gold_total) == (6, 8)
    assert theirs.filter(qualified_votes=1).count() == 12  # the held votes count now


def test_a_shortfall_that_no_luck_can_mend_stops_the_worker_at_once(
    pair_gold, settings, django_capture_on_commit_callbacks
):
    settings.TASKS = IMMEDIATE_TASKS
    with django_capture_on_commit_callbacks(execute=True):
        worker, _ = work(pair_gold, gold_right=1, real=negative)
    quality = quality_of(pair_gold, worker)
    assert (quality.qualified, quality.held_until) == (False, None)
    with pytest.raises(NoWorkLeft, match="quality bar"):
        assignment_start(campaign=pair_gold, worker=worker)


def test_with_no_more_gold_for_the_worker_the_share_decides_on_four(pair_gold):
    worker, _ = work(pair_gold, gold_right=2, real=negative)
    GoldRound.objects.filter(campaign=pair_gold).exclude(rounds__worker=worker).update(
        is_active=False
    )
    quality_refresh(campaign=pair_gold)
    quality = quality_of(pair_gold, worker)
    assert (quality.qualified, quality.held_until) == (False, None)
    assert quality.reasons == ["2 of 4 gold counterfactuals right, fewer than 3"]
    with pytest.raises(NoWorkLeft, match="quality bar"):
        assignment_start(campaign=pair_gold, worker=worker)


def _aggregate_writes(campaign, **kwargs) -> list[str]:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as queries:
        aggregates = candidates_aggregate(campaign=campaign, **kwargs)
    assert aggregates  # every voted candidate is returned, written or not
    return [
        query["sql"]
        for query in queries.captured_queries
        if "quality_aggregatedlabel" in query["sql"]
        and query["sql"].lstrip().upper().startswith(("INSERT", "UPDATE"))
    ]


@pytest.mark.parametrize("judgments", [2, 3])  # 3: the crowd-kit estimates too
def test_a_pass_writes_only_the_labels_that_changed(db, judgments):
    campaign = make_labeling_campaign(
        units=4,
        gold=2,
        training=1,
        rounds_per_assignment=4,
        gold_rounds_per_assignment=2,
        k=judgments,
    )
    for _ in range(judgments):
        work(campaign, real=lambda _: (True, "negative"))
    quality_refresh(campaign=campaign)
    stored = dict(AggregatedLabel.objects.values_list("candidate_id", "updated_at"))
    assert stored

    assert _aggregate_writes(campaign) == []  # a steady pass: nothing to write
    assert dict(AggregatedLabel.objects.values_list("candidate_id", "updated_at")) == stored

    # One judgment changes its label: that candidate's row alone is written again.
    from cfannotate.labeling.models import Judgment

    judgment = Judgment.objects.filter(
        round__kind="real", candidate__aggregated_label__isnull=False
    ).first()
    judgment.label = campaign.labels.get(value="positive")
    judgment.save(update_fields=["label"])
    writes = _aggregate_writes(campaign)
    assert len(writes) == 1
    after = dict(AggregatedLabel.objects.values_list("candidate_id", "updated_at"))
    moved = {candidate for candidate, at in after.items() if at != stored[candidate]}
    if judgments == 2:
        assert moved == {judgment.candidate_id}
    else:  # the estimates model every worker: a changed vote may move others' confidence
        assert judgment.candidate_id in moved
    assert AggregatedLabel.objects.get(candidate_id=judgment.candidate_id).label_votes == {
        "negative": judgments - 1,
        "positive": 1,
    }
    # Asked for some candidates (after one assignment), the same rule.
    assert _aggregate_writes(campaign, candidate_ids=[judgment.candidate_id]) == []
