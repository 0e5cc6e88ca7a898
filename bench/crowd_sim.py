"""Crowd simulation: do the C.2 filters and the vote recover the truth from a noisy crowd?

A sentiment campaign with known ground truth for every counterfactual is labeled by
simulated workers through the real labeling services (assignment start, round serve,
round submit, with a simulated clock), in waves; after each wave quality control runs
(worker filter, vote, re-queue). The crowd: 70% careful workers, right 90% of the time
at about 35 s per round, and 30% spammers in three kinds: random answers at a
believable pace, the same answer every time, and random answers far too fast.

    python bench/crowd_sim.py --quick      # within 60 s
    python bench/crowd_sim.py --workers 120 --units 600

The last line reads
`RESULT crowd_sim kept_accuracy=... spammer_recall=... careful_kept=...`:
kept_accuracy is the share of kept counterfactuals whose kept label is the true one,
spammer_recall the share of spammers the filter removed, careful_kept the share of
careful workers it kept.
"""

import argparse
import os
import random
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from cfannotate.labeling.simulation import (  # noqa: E402  (plain module, no Django setup)
    BEHAVIOURS,
    Behaviour,
    answer,
    crowd_mix,
    gold_truth,
    work_assignment,
)

__all__ = ["BEHAVIOURS", "answer", "crowd_mix", "simulate"]

LABELS = ("positive", "negative")
GOLD_ROUNDS = (  # (text, valid, label): unambiguous, both labels and one invalid per round
    [
        ("The film is a stale and unfunny take on an old tale.", True, "negative"),
        ("The film is a fresh and funny take on an old tale.", True, "positive"),
        ("The film is a a fresh take funny on old tale an.", False, "positive"),
    ],
    [
        ("I hated every minute of this dull movie.", True, "negative"),
        ("I loved every minute of this wonderful movie.", True, "positive"),
        ("I did not hate a single minute of this movie.", True, "positive"),
    ],
    [
        ("The acting was superb and the plot gripping.", True, "positive"),
        ("The acting was wooden and the plot a mess.", True, "negative"),
        ("Acting the was wooden plot and the mess a.", False, "negative"),
    ],
    [
        ("A moving, beautifully shot drama.", True, "positive"),
        ("A tedious, badly shot drama.", True, "negative"),
        ("Nothing about this drama worked for me.", True, "negative"),
    ],
)


@dataclass
class SimResult:
    workers: int
    spammers: int
    spammers_filtered: int
    careful: int
    careful_kept: int
    kept: int
    kept_correct: int
    candidates: int
    judgments: int
    requeued_units: int
    waves: int
    seconds: float

    @property
    def kept_accuracy(self) -> float:
        return self.kept_correct / self.kept if self.kept else 0.0

    @property
    def spammer_recall(self) -> float:
        return self.spammers_filtered / self.spammers if self.spammers else 1.0

    @property
    def careful_kept_share(self) -> float:
        return self.careful_kept / self.careful if self.careful else 0.0

    def result_line(self) -> str:
        return (
            f"RESULT crowd_sim kept_accuracy={self.kept_accuracy:.3f} "
            f"spammer_recall={self.spammer_recall:.3f} careful_kept={self.careful_kept_share:.3f}"
        )


def campaign_setup(*, owner, units: int, rng: random.Random):
    """A sentiment campaign open for labeling; returns (campaign, truth by candidate id)."""
    from cfannotate.campaigns.models import CampaignStatus
    from cfannotate.campaigns.services import campaign_create, originals_import
    from cfannotate.candidates.models import Candidate, CandidateSource, CandidateStatus
    from cfannotate.labeling.gold import gold_rounds_import
    from cfannotate.labeling.models import LabelingUnit, UnitItem

    campaign = campaign_create(
        owner=owner,
        name=f"Crowd simulation {rng.randrange(10**6)}",
        task_type="sentiment",
        settings={"judgments_per_candidate": 2, "rounds_per_assignment": 20},
    )
    records = [
        {
            "id": f"x{i}",
            "text": f"Review {i}: the film was {rng.choice(['good', 'bad'])}.",
            "label": rng.choice(LABELS),
        }
        for i in range(units)
    ]
    records += [
        {"id": f"gold{i}", "text": f"Gold review {i}.", "label": "negative"}
        for i in range(len(GOLD_ROUNDS) + 1)
    ]
    originals_import(campaign=campaign, records=records)
    gold_rounds_import(
        campaign=campaign,
        records=[
            {
                "original_id": f"gold{i}",
                "kind": "gold",
                "items": [{"text": t, "valid": v, "label": lab} for t, v, lab in items],
            }
            for i, items in enumerate(GOLD_ROUNDS)
        ]
        + [
            {
                "original_id": f"gold{len(GOLD_ROUNDS)}",
                "kind": "training",
                "items": [{"text": t, "valid": v, "label": lab} for t, v, lab in GOLD_ROUNDS[0]],
            }
        ],
    )
    truth: dict[int, tuple[bool, str]] = {}
    originals = campaign.originals.exclude(external_id__startswith="gold").order_by("id")
    for original in originals:
        unit = LabelingUnit.objects.create(campaign=campaign, original=original, judgments_needed=2)
        for position in range(3):
            candidate = Candidate.objects.create(
                campaign=campaign,
                original=original,
                text=f"{original.text} Variant {position}.",
                source=CandidateSource.IMPORTED,
                generator="simulation",
                status=CandidateStatus.SELECTED,
            )
            UnitItem.objects.create(unit=unit, candidate=candidate, position=position)
            # Most counterfactuals are fluent; labels flip about half the time.
            truth[candidate.id] = (rng.random() < 0.85, rng.choice(LABELS))
    campaign.status = CampaignStatus.LABELING
    campaign.save(update_fields=["status"])
    truth.update(gold_truth(campaign))
    return campaign, truth


def simulate(*, owner, workers: int, units: int, seed: int, max_waves: int = 4) -> SimResult:
    from django.db.models import F, Sum

    from cfannotate.crowd.services import worker_get_or_create
    from cfannotate.labeling.assignments import NoWorkLeft
    from cfannotate.labeling.models import Judgment, LabelingUnit
    from cfannotate.quality.models import AggregatedLabel, WorkerQuality
    from cfannotate.quality.services import quality_refresh

    started = time.perf_counter()
    rng = random.Random(seed)
    campaign, truth = campaign_setup(owner=owner, units=units, rng=rng)
    behaviours: dict[int, Behaviour] = {}
    clock = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
    waves = 0
    for wave in range(max_waves):
        waves = wave + 1
        for behaviour in crowd_mix(workers, rng):
            worker = worker_get_or_create(platform="link", external_id=f"sim-{len(behaviours)}")
            behaviours[worker.id] = behaviour
            clock += timedelta(seconds=rng.randint(5, 60))
            try:
                work_assignment(
                    campaign=campaign,
                    worker=worker,
                    behaviour=behaviour,
                    truth=truth,
                    start=clock,
                    rng=rng,
                )
            except NoWorkLeft:
                break
        quality_refresh(campaign=campaign)
        open_units = LabelingUnit.objects.filter(campaign=campaign).exclude(
            completed__gte=F("judgments_needed")
        )
        if not open_units.exists():
            break

    qualified = dict(
        WorkerQuality.objects.filter(campaign=campaign).values_list("worker_id", "qualified")
    )
    judged = {worker_id for worker_id in behaviours if worker_id in qualified}
    spammers = [w for w in judged if behaviours[w].is_spammer]
    careful = [w for w in judged if not behaviours[w].is_spammer]
    kept = list(
        AggregatedLabel.objects.filter(candidate__campaign=campaign, kept=True).values_list(
            "candidate_id", "label__value"
        )
    )
    return SimResult(
        workers=len(judged),
        spammers=len(spammers),
        spammers_filtered=sum(1 for w in spammers if not qualified[w]),
        careful=len(careful),
        careful_kept=sum(1 for w in careful if qualified[w]),
        kept=len(kept),
        kept_correct=sum(1 for candidate_id, label in kept if truth[candidate_id][1] == label),
        candidates=units * 3,
        judgments=Judgment.objects.filter(
            round__assignment__campaign=campaign, round__submitted_at__isnull=False
        ).count(),
        requeued_units=LabelingUnit.objects.filter(campaign=campaign).aggregate(n=Sum("requeues"))[
            "n"
        ]
        or 0,
        waves=waves,
        seconds=time.perf_counter() - started,
    )


def _django_setup(state_dir: str) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "cfannotate.settings")
    os.environ["CFANNOTATE_STATE_DIR"] = state_dir
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="30 workers a wave, 150 units")
    parser.add_argument("--workers", type=int, default=60, help="workers per wave")
    parser.add_argument("--units", type=int, default=300)
    parser.add_argument("--waves", type=int, default=4)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    workers, units = (30, 150) if args.quick else (args.workers, args.units)

    with tempfile.TemporaryDirectory(prefix="cfannotate-crowd-sim-") as state_dir:
        _django_setup(state_dir)
        from django.contrib.auth import get_user_model

        owner = get_user_model().objects.create_user("simulation")
        result = simulate(
            owner=owner, workers=workers, units=units, seed=args.seed, max_waves=args.waves
        )
    print(
        f"crowd: {result.workers} workers ({result.spammers} spammers, {result.careful} careful) "
        f"in {result.waves} wave(s); {result.judgments} judgments on {units} units "
        f"({result.requeued_units} extra judgments from re-queues)"
    )
    print(
        f"filter: {result.spammers_filtered}/{result.spammers} spammers removed, "
        f"{result.careful_kept}/{result.careful} careful workers kept"
    )
    print(
        f"vote: {result.kept} counterfactuals kept, {result.kept_correct} with the true label; "
        f"{result.seconds:.1f} s"
    )
    print(result.result_line())


if __name__ == "__main__":
    main()
