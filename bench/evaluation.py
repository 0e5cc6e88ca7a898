"""Benchmark: Polyjuice Tables 2 and 3 with the TF-IDF baseline on CAD sentiment (IMDb reviews).

CAD (Kaushik et al., 2020) pairs each review with a human revision that flips its label,
the same shape as a campaign's originals and kept counterfactuals.

- Table 2: the baseline trained on the first review of every CAD train pair, scored on
  the dev pairs: originals, their revisions as the contrast set, the drop, consistency,
  with 95% bootstrap intervals (`generation.evaluation.contrast_report`).
- Table 3: the train pairs as a campaign in which only every `--every`-th original got a
  counterfactual; comp (n + m originals) against aug (n originals + m revisions), scored
  on held-out originals and held-out revisions, mean ± std over seeds.

    OMP_NUM_THREADS=1 python bench/evaluation.py            # n = 800, m = 350, 3 seeds
    python bench/evaluation.py --quick                      # n = 300, m = 150, 2 seeds

The last line reads `RESULT evaluation orig=... contrast=... consistency=... comp_contrast=...`.
"""

import os

for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")  # one core, before numpy loads

import argparse  # noqa: E402
import csv  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # before bench/, whose generation.py would shadow the package

from generation.evaluation import (  # noqa: E402
    AugmentationConfig,
    LabeledCounterfactual,
    augmentation_report,
    contrast_report,
    trained_predictions,
)
from generation.records import OriginalRecord  # noqa: E402

SHARED = REPO.parent / "shared" / "data" / "cad" / "sentiment_combined_paired"


def cad_pairs(split: str) -> tuple[list[OriginalRecord], list[LabeledCounterfactual]]:
    """The first review of each pair as the original, the second as its counterfactual."""
    with (SHARED / f"{split}_paired.tsv").open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    originals, counterfactuals = [], []
    for index, (first, second) in enumerate(zip(rows[::2], rows[1::2], strict=True)):
        assert first["batch_id"] == second["batch_id"], f"{split}: rows out of pairs"
        key = f"{split}{index}"
        originals.append(
            OriginalRecord(key, first["Text"].replace("<br />", " "), first["Sentiment"].lower())
        )
        counterfactuals.append(
            LabeledCounterfactual(
                f"{key}x", key, second["Text"].replace("<br />", " "), second["Sentiment"].lower()
            )
        )
    return originals, counterfactuals


def _percent(figure) -> str:
    return f"{figure.value * 100:5.1f} [{figure.low * 100:.1f}, {figure.high * 100:.1f}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller n and m, two seeds")
    parser.add_argument("--every", type=int, default=3, help="every k-th original has an x̂")
    args = parser.parse_args()

    train, train_revisions = cad_pairs("train")
    dev, dev_revisions = cad_pairs("dev")

    started = time.perf_counter()
    predicted = trained_predictions(train, dev, dev_revisions, seed=0)
    table2 = contrast_report(dev, dev_revisions, predicted)
    table2_seconds = time.perf_counter() - started
    print(f"Table 2: baseline trained on {len(train)} CAD train originals, CAD dev pairs")
    print(f"  orig. set     {_percent(table2.original_accuracy)}  n={table2.originals}")
    print(
        f"  contrast set  {_percent(table2.contrast_accuracy)}  "
        f"({table2.drop.value * 100:+.1f}, drop CI [{table2.drop.low * 100:+.1f}, "
        f"{table2.drop.high * 100:+.1f}])"
    )
    print(f"  consistency   {_percent(table2.consistency)}  ({table2_seconds:.1f} s)")

    kept = {o.key for o in train[:: args.every]}
    counterfactuals = [c for c in train_revisions if c.original_key in kept]
    config = (
        AugmentationConfig(n=300, m=150, seeds=(0, 1))
        if args.quick
        else AugmentationConfig(n=800, m=350, seeds=(0, 1, 2))
    )
    started = time.perf_counter()
    table3 = augmentation_report(train, counterfactuals, config=config)
    table3_seconds = time.perf_counter() - started
    print(
        f"Table 3: {len(train)} CAD train originals, {len(counterfactuals)} with a revision; "
        f"{config.test_fraction:.0%} held out; seeds {list(config.seeds)} ({table3_seconds:.1f} s)"
    )
    print(f"  {'n':>5} {'m':>5} model  held-out orig.  contrast set")
    for model in ("comp", "aug"):
        original = getattr(table3, f"{model}_original_accuracy")
        contrast = getattr(table3, f"{model}_contrast_accuracy")
        print(
            f"  {table3.n:>5} {table3.m:>5} {model:5}  {original.mean * 100:5.1f} ± "
            f"{original.std * 100:3.1f}    {contrast.mean * 100:5.1f} ± {contrast.std * 100:3.1f}"
        )
    print(
        "RESULT evaluation "
        f"orig={table2.original_accuracy.value:.3f} contrast={table2.contrast_accuracy.value:.3f} "
        f"consistency={table2.consistency.value:.3f} "
        f"comp_contrast={table3.comp_contrast_accuracy.mean:.3f} "
        f"aug_contrast={table3.aug_contrast_accuracy.mean:.3f} "
        f"comp_orig={table3.comp_original_accuracy.mean:.3f} "
        f"aug_orig={table3.aug_original_accuracy.mean:.3f} "
        f"seconds={table2_seconds + table3_seconds:.1f}"
    )


if __name__ == "__main__":
    main()
