from datetime import UTC, datetime, timedelta

import pytest

from cfannotate.labeling.assignments import assignment_start
from cfannotate.labeling.models import GoldItem, RoundKind
from cfannotate.labeling.rounds import Answer, current_round, round_serve, round_submit
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
