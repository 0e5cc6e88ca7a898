from datetime import UTC, datetime, timedelta

import pytest

from cfannotate.campaigns.models import Campaign
from cfannotate.crowd.models import Worker
from cfannotate.labeling.assignments import assignment_start
from cfannotate.labeling.models import GoldItem, RoundKind
from cfannotate.labeling.rounds import Answer, current_round, round_serve, round_submit
from cfannotate.quality.models import WorkerDecision, WorkerQuality
from tests.factories import make_labeling_campaign, make_worker

START = datetime(2026, 3, 2, 10, 0, tzinfo=UTC)


def work(
    campaign,
    *,
    seconds: float = 30.0,
    gold_right: int = 6,
    real=lambda candidate_id: (True, "positive"),
    worker=None,
    start=START,
):
    """A worker does a whole assignment through the labeling services, on a fake clock.

    Every round takes `seconds`; the first `gold_right` gold counterfactuals get the
    expected answers and the others a wrong label; real counterfactuals get `real(id)`.
    """
    worker = worker or make_worker()
    assignment = assignment_start(campaign=campaign, worker=worker, now=start)
    now = start
    gold_seen = 0
    while (round_ := current_round(assignment)) is not None:
        view = round_serve(assignment=assignment, position=round_.position, now=now)
        now += timedelta(seconds=seconds)
        candidate_ids = list(round_.judgments.order_by("id").values_list("candidate_id", flat=True))
        answers = []
        for item, candidate_id in zip(view.items, candidate_ids, strict=True):
            if round_.kind == RoundKind.REAL:
                is_valid, label = real(candidate_id)
            else:
                gold = GoldItem.objects.select_related("expected_label").get(
                    candidate_id=candidate_id
                )
                right = round_.kind == RoundKind.TRAINING or gold_seen < gold_right
                gold_seen += round_.kind == RoundKind.GOLD
                label = gold.expected_label.value
                if not right:
                    label = campaign.labels.exclude(value=label).first().value
                is_valid = gold.expected_valid
            answers.append(Answer(index=item.index, is_valid=is_valid, label=label))
        round_submit(assignment=assignment, position=round_.position, answers=answers, now=now)
        assignment.refresh_from_db()
        now += timedelta(seconds=1)
    return worker, assignment


@pytest.fixture
def c2_campaign(db):
    """Two gold rounds of three (6 gold counterfactuals, as in C.2), 4 real rounds, K = 2."""
    return make_labeling_campaign(
        units=4, gold=2, training=1, rounds_per_assignment=4, gold_rounds_per_assignment=2
    )


def make_crowd(owner, workers: int) -> Campaign:
    """A labeling campaign with `workers` standings (every third filtered, every fifth kept
    one still working) and a proposed block for each filtered worker."""
    campaign = make_labeling_campaign(units=3)
    Campaign.objects.filter(pk=campaign.pk).update(owner=owner, status="labeling")
    campaign.refresh_from_db()
    crowd = Worker.objects.bulk_create(
        Worker(platform="link", external_id=f"crowd-{number:04}") for number in range(workers)
    )
    WorkerQuality.objects.bulk_create(
        WorkerQuality(
            campaign=campaign,
            worker=worker,
            qualified=number % 3 != 0,
            reasons=[] if number % 3 else ["median 4 s a round, under 18 s"],
            settled=number % 5 != 0,
            rounds=10,
            median_seconds=20.0 + number % 7,
            gold_correct=4,
            gold_total=6,
            label_counts={"positive": 5, "negative": 5},
            distribution_distance=0.1 * (number % 5),
        )
        for number, worker in enumerate(crowd)
    )
    WorkerDecision.objects.bulk_create(
        WorkerDecision(campaign=campaign, worker=worker, action="block", reason="Filtered.")
        for number, worker in enumerate(crowd)
        if number % 3 == 0
    )
    return campaign
