"""The gold rule over many assignments: careful workers lost and spammers paid, with the hold.

C.2 judged each worker on 6 gold counterfactuals. Where gold rounds hold two (CAD's
pairs), an assignment's gold is 4. This simulates workers taking assignment after
assignment through `cfannotate.quality.rules.worker_verdict` (the code the campaign
runs), twice in the same run on the same answers:

- **ours:** the worker's gold still to come is passed in, so a worker short of the share
  before the gold sample (6) is held, not removed (`rules.gold_on_hold`);
- **baseline:** nothing is said to come, which is the rule without the hold (the share
  of the gold answered, checked after every assignment).

Careful workers answer a gold counterfactual right with probability 0.85 or 0.90,
random clickers with 0.25 (a valid/invalid guess times a two-label guess). Every worker
is slow enough for the time rule, so only the gold rule is measured.

    python bench/gold_rule.py --quick     # a few seconds
    python bench/gold_rule.py             # more workers

The last line reads `RESULT gold_rule careful_removed=... baseline_careful_removed=...
ratio=... spammer_assignments=... baseline_spammer_assignments=...`: careful_removed is
the share of careful (0.85) workers removed within the assignments, ratio baseline/ours,
spammer_assignments the mean number of assignments a random clicker begins before
being removed.
"""

import argparse
import random
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from cfannotate.quality.rules import (  # noqa: E402  (pure module, no Django setup)
    FilterSettings,
    WorkerEvidence,
    worker_verdict,
)

SETTINGS = FilterSettings()  # C.2: 18 s, 4/6, gold sample 6 (two gold rounds)
SECONDS = [30.0] * 22  # slow enough: the time rule never decides here


def assignments_until_removed(
    accuracy: float, *, gold_per_assignment: int, assignments: int, hold: bool, seed: int
) -> int | None:
    """The assignment (1-based) after whose gold the worker is removed, or None."""
    rng = random.Random(seed)
    pool = gold_per_assignment * assignments
    results: list[bool] = []
    for number in range(1, assignments + 1):
        results.extend(rng.random() < accuracy for _ in range(gold_per_assignment))
        evidence = WorkerEvidence(
            round_seconds=SECONDS,
            gold_results=results,
            gold_to_come=pool - len(results) if hold else 0,
        )
        verdict = worker_verdict(evidence, others_label_counts={}, settings=SETTINGS)
        if not verdict.qualified and not verdict.on_hold:
            return number
    return None


def crowd(accuracy: float, *, workers: int, gold: int, assignments: int, hold: bool):
    """(share removed within the assignments, mean assignments begun before removal)."""
    removed_at = [
        assignments_until_removed(
            accuracy, gold_per_assignment=gold, assignments=assignments, hold=hold, seed=seed
        )
        for seed in range(workers)
    ]
    removed = sum(at is not None for at in removed_at) / workers
    begun = sum(at if at is not None else assignments for at in removed_at) / workers
    return removed, begun


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="4,000 workers a kind")
    parser.add_argument("--workers", type=int, default=None, help="workers of each kind")
    parser.add_argument("--assignments", type=int, default=10, help="assignments a worker takes")
    args = parser.parse_args(argv)
    workers = args.workers or (4_000 if args.quick else 40_000)
    started = time.perf_counter()
    print(
        f"{workers} workers of each kind, {args.assignments} assignments each, "
        f"gold sample {SETTINGS.gold_sample}, share {SETTINGS.min_gold_share:.3f}"
    )
    print(
        f"{'gold/assignment':>15} {'right':>6} {'removed: ours':>14} {'baseline':>9} "
        f"{'assignments begun: ours':>24} {'baseline':>9}"
    )
    figures = {}
    for gold in (4, 6):
        for accuracy in (0.85, 0.90, 0.25):
            ours = crowd(
                accuracy, workers=workers, gold=gold, assignments=args.assignments, hold=True
            )
            baseline = crowd(
                accuracy, workers=workers, gold=gold, assignments=args.assignments, hold=False
            )
            figures[(gold, accuracy)] = ours, baseline
            print(
                f"{gold:>15} {accuracy:>6.2f} {ours[0]:>14.3f} {baseline[0]:>9.3f} "
                f"{ours[1]:>24.2f} {baseline[1]:>9.2f}"
            )
    seconds = time.perf_counter() - started
    print(f"{seconds:.1f} s")
    (ours_careful, _), (base_careful, _) = figures[(4, 0.85)]
    (_, ours_spam), (_, base_spam) = figures[(4, 0.25)]
    ratio = base_careful / ours_careful if ours_careful else float("inf")
    print(
        f"RESULT gold_rule careful_removed={ours_careful:.3f} "
        f"baseline_careful_removed={base_careful:.3f} ratio={ratio:.2f} "
        f"spammer_assignments={ours_spam:.2f} baseline_spammer_assignments={base_spam:.2f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
