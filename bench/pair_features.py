"""The built-in baseline on sentence pairs, with and without its pair features, in one run.

The classifier in the loop of an NLI or duplicate-questions campaign is
`generation.priority.BaselineClassifier` over (premise, hypothesis): TF-IDF n-grams of
each side, and `pair_features` (word overlap, one-sided negation, length) relating them.
On the first N CAD NLI train originals (`NLI_original/train.tsv`), out of fold by
original (5 parts, as the app predicts candidates), this counts how many originals each
classifier labels right, next to the most common label, and how many of their
human-revised hypotheses (`NLI_revised_hypothesis/train.tsv`, each a minimal edit that
changes the label) it gives their new label: what selection's flip term relies on.

    python bench/pair_features.py --quick    # 200 originals
    python bench/pair_features.py            # 1,000 originals

The last line reads `RESULT pair_features ratio=... revised=... baseline_revised=...
originals_right=... baseline_originals_right=... majority=... originals=...`: ratio is
the share of revisions given their new label with the pair features over the share
without them (the baseline: n-grams alone).
"""

import argparse
import csv
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from generation.priority import BaselineClassifier  # noqa: E402

DEFAULT_CAD = REPO.parent / "shared" / "data" / "cad"
FOLDS = 5


@dataclass(frozen=True)
class Pair:
    premise: str
    hypothesis: str
    label: str


def read_pairs(path: Path) -> list[Pair]:
    with path.open(encoding="utf-8", newline="") as handle:
        rows = csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)
        return [Pair(r["sentence1"], r["sentence2"], r["gold_label"]) for r in rows]


def measure(originals: list[Pair], revisions: list[Pair], *, pair: bool) -> dict[str, int]:
    """Originals right and revisions given their new label, out of fold by original."""
    # The revision files name an original by its premise alone: a revision goes with the
    # first original of its premise, and with its part.
    part_of_premise: dict[str, int] = {}
    for index, original in enumerate(originals):
        part_of_premise.setdefault(original.premise, index % FOLDS)
    right = revised_right = revised_total = 0
    for part in range(FOLDS):
        train = [o for i, o in enumerate(originals) if i % FOLDS != part]
        held = [o for i, o in enumerate(originals) if i % FOLDS == part]
        model = BaselineClassifier(pair=pair).fit(
            [o.hypothesis for o in train], [o.label for o in train], [o.premise for o in train]
        )
        tested = held + [r for r in revisions if part_of_premise.get(r.premise) == part]
        probabilities = model.predict_proba(
            [t.hypothesis for t in tested], [t.premise for t in tested]
        )
        predicted = model.classes_[np.argmax(probabilities, axis=1)]
        hits = [label == t.label for label, t in zip(predicted, tested, strict=True)]
        right += sum(hits[: len(held)])
        revised_right += sum(hits[len(held) :])
        revised_total += len(tested) - len(held)
    return {"right": right, "revised_right": revised_right, "revised": revised_total}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="200 originals.")
    parser.add_argument("--originals", type=int, default=1000, help="How many (1,000).")
    parser.add_argument("--data", type=Path, default=DEFAULT_CAD, help="The CAD data folder.")
    args = parser.parse_args()
    files = (args.data / "NLI_original/train.tsv", args.data / "NLI_revised_hypothesis/train.tsv")
    missing = [str(path) for path in files if not path.is_file()]
    if missing:
        print(f"bench: the CAD NLI data is missing: {', '.join(missing)}", file=sys.stderr)
        return 2
    count = 200 if args.quick else args.originals
    if count < 2 * FOLDS:
        print(f"bench: --originals must be at least {2 * FOLDS}", file=sys.stderr)
        return 2
    originals, revisions = read_pairs(files[0])[:count], read_pairs(files[1])
    majority = Counter(o.label for o in originals).most_common(1)[0][1]
    figures = {}
    for name, pair in (("baseline", False), ("ours", True)):
        started = time.perf_counter()
        figures[name] = measure(originals, revisions, pair=pair)
        found = figures[name]
        print(
            f"{name:<8} originals right {found['right']}/{len(originals)} "
            f"(most common label: {majority}); revisions given their new label "
            f"{found['revised_right']}/{found['revised']}; "
            f"{time.perf_counter() - started:.1f} s"
        )
    ours, baseline = figures["ours"], figures["baseline"]
    revised = ours["revised_right"] / max(1, ours["revised"])
    baseline_revised = baseline["revised_right"] / max(1, baseline["revised"])
    print(
        f"RESULT pair_features ratio={revised / max(baseline_revised, 1e-9):.3f} "
        f"revised={revised:.3f} baseline_revised={baseline_revised:.3f} "
        f"originals_right={ours['right']} baseline_originals_right={baseline['right']} "
        f"majority={majority} originals={len(originals)}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
