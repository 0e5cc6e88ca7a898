"""Simulated crowdworkers that label through the real labeling services.

Used by the demo's labeled example and by the crowd simulation benchmark
(`bench/crowd_sim.py`): each worker does whole assignments (assignment start, round
serve, round submit) on a simulated clock, so the rounds, judgments, gold scoring and
quality control that follow are exactly what real workers would produce. Workers
answer from a known truth per counterfactual: careful ones are right most of the
time at a realistic pace; spammers answer at random, always the same, or too fast.
"""

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

Truth = tuple[bool, str]  # (valid, label value) of one counterfactual


@dataclass(frozen=True)
class Behaviour:
    kind: str  # careful | random | constant | fast
    accuracy: float  # chance of giving the true answer (careful workers)
    median_seconds: float

    @property
    def is_spammer(self) -> bool:
        return self.kind != "careful"


BEHAVIOURS = {
    "careful": Behaviour("careful", accuracy=0.9, median_seconds=35.0),
    "random": Behaviour("random", accuracy=0.0, median_seconds=26.0),
    "constant": Behaviour("constant", accuracy=0.0, median_seconds=24.0),
    "fast": Behaviour("fast", accuracy=0.0, median_seconds=5.0),
}


def crowd_mix(workers: int, rng: random.Random) -> list[Behaviour]:
    """70% careful, 30% spammers split evenly over the three kinds, in random order."""
    spammers = round(workers * 0.3)
    kinds = [("random", "constant", "fast")[i % 3] for i in range(spammers)]
    kinds += ["careful"] * (workers - spammers)
    rng.shuffle(kinds)
    return [BEHAVIOURS[kind] for kind in kinds]


def answer(behaviour: Behaviour, truth: Truth, labels: Sequence[str], rng: random.Random) -> Truth:
    """What this worker answers for a counterfactual whose true answer is `truth`."""
    valid, label = truth
    if behaviour.kind == "constant":
        return True, labels[0]
    if behaviour.kind in ("random", "fast"):
        return rng.random() < 0.5, rng.choice(list(labels))
    if rng.random() < behaviour.accuracy:
        return valid, label
    # A slip: the validity or the label, not both.
    if rng.random() < 0.5 or len(labels) < 2:
        return not valid, label
    return valid, rng.choice([other for other in labels if other != label])


def round_seconds(behaviour: Behaviour, rng: random.Random) -> float:
    return max(1.0, rng.lognormvariate(0, 0.3) * behaviour.median_seconds)


def work_assignment(
    *,
    campaign,
    worker,
    behaviour: Behaviour,
    truth: Mapping[int, Truth],
    start: datetime,
    rng: random.Random,
) -> int:
    """One worker does one whole assignment; returns the rounds done.

    `truth` maps candidate ids (real and gold) to their true answers. Raises
    `NoWorkLeft` when the campaign has nothing for this worker.
    """
    from cfannotate.labeling.assignments import assignment_start
    from cfannotate.labeling.rounds import Answer, current_round, round_serve, round_submit

    labels = list(campaign.labels.values_list("value", flat=True))
    now = start
    assignment = assignment_start(campaign=campaign, worker=worker, now=now, rng=rng)
    rounds = 0
    while (round_ := current_round(assignment)) is not None:
        view = round_serve(assignment=assignment, position=round_.position, now=now)
        now += timedelta(seconds=round_seconds(behaviour, rng))
        candidates = list(round_.judgments.order_by("id").values_list("candidate_id", flat=True))
        by_index = dict(zip((item.index for item in view.items), candidates, strict=True))
        answers = []
        for index, candidate_id in by_index.items():
            is_valid, label = answer(behaviour, truth[candidate_id], labels, rng)
            answers.append(Answer(index=index, is_valid=is_valid, label=label))
        round_submit(assignment=assignment, position=round_.position, answers=answers, now=now)
        assignment.refresh_from_db()
        rounds += 1
        now += timedelta(seconds=2)
    return rounds


def gold_truth(campaign) -> dict[int, Truth]:
    """The expected answers of the campaign's gold and training items, by candidate id."""
    from cfannotate.labeling.models import GoldItem

    items = GoldItem.objects.filter(gold_round__campaign=campaign).select_related("expected_label")
    return {item.candidate_id: (item.expected_valid, item.expected_label.value) for item in items}
