"""Benchmark: the classifier in the loop, fitted with and without counterfactual pairs.

A campaign's built-in baseline (`generation.label_classifiers.BaselineLabelClassifier`,
TF-IDF + logistic regression) predicts each candidate's label so that selection can
prefer the ones that flip it. It is fitted on the campaign's originals and, since
`cfannotate.candidates.predictions.baseline_training_rows`, on its labeled
counterfactuals too (gold answers, the crowd's kept labels, the researcher's own
pairs). This measures what that buys on held-out data: fitted on N CAD sentiment
*train* originals alone (the baseline) and on the same originals plus the human
revisions of M of them (ours), how often it gives CAD *dev* reviews their label:
the originals, and the human revisions, whose label is the other one. The second is
the job in the loop: telling that an edit flipped the label.

    python bench/flip_classifier.py --quick        # a few seconds
    python bench/flip_classifier.py                # every setting, 5 draws each

The last line reads `RESULT flip_classifier ratio=... revised=... baseline_revised=...
original=... baseline_original=... originals=... pairs=...` for the first setting
(the demo's size: 40 originals, 36 of them with a counterfactual), `ratio` being ours
over the baseline on the revisions.
"""

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # before bench/, whose generation.py would shadow the package

from generation.cad_sentiment import (  # noqa: E402
    DEFAULT_CAD,
    SENTIMENT_FOLDER,
    SentimentPair,
    sentiment_pairs,
)
from generation.label_classifiers import BaselineLabelClassifier  # noqa: E402

# (originals, of which with their human revision): the demo's campaign first.
SETTINGS = ((40, 36), (40, 10), (200, 36), (200, 200), (0, 200))


def accuracy(classifier, texts: list[str], labels: list[str]) -> float:
    predicted = classifier.predict(texts)
    return statistics.fmean(p.label == label for p, label in zip(predicted, labels, strict=True))


def fitted(originals: list[SentimentPair], paired: list[SentimentPair]) -> BaselineLabelClassifier:
    """Fitted on the originals' texts and the human revisions of `paired`."""
    texts = [pair.original for pair in originals] + [pair.revised for pair in paired]
    labels = [pair.original_label for pair in originals] + [pair.revised_label for pair in paired]
    return BaselineLabelClassifier().fit(texts, labels)


def measure(train, dev, originals: int, pairs: int, draws: int) -> dict[str, float]:
    """Mean accuracies over `draws` random draws of the training pairs."""
    dev_texts = [pair.original for pair in dev], [pair.original_label for pair in dev]
    dev_revised = [pair.revised for pair in dev], [pair.revised_label for pair in dev]
    figures: dict[str, list[float]] = {}
    for draw in range(draws):
        drawn = random.Random(draw).sample(train, min(len(train), max(originals, pairs)))
        with_pairs = fitted(drawn[:originals], drawn[:pairs])
        runs = {"original": with_pairs, "revised": with_pairs}
        if originals:
            alone = fitted(drawn[:originals], [])
            runs |= {"baseline_original": alone, "baseline_revised": alone}
        for name, classifier in runs.items():
            texts, labels = dev_revised if name.endswith("revised") else dev_texts
            figures.setdefault(name, []).append(accuracy(classifier, texts, labels))
    return {name: statistics.fmean(values) for name, values in figures.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="The first setting, 2 draws.")
    parser.add_argument("--draws", type=int, default=5, help="Random draws per setting (5).")
    parser.add_argument("--data", type=Path, default=DEFAULT_CAD, help="The CAD data folder.")
    args = parser.parse_args()
    if not (args.data / SENTIMENT_FOLDER).is_dir():
        print(f"bench: the CAD sentiment data is missing at {args.data}", file=sys.stderr)
        return 2
    if args.draws < 1:
        print("bench: --draws must be at least 1", file=sys.stderr)
        return 2
    settings, draws = (SETTINGS[:1], 2) if args.quick else (SETTINGS, args.draws)
    train, dev = sentiment_pairs(args.data, "train"), sentiment_pairs(args.data, "dev")
    print(f"CAD sentiment: {len(train)} train pairs, {len(dev)} dev pairs; {draws} draws each")
    print(
        "originals  with revision  dev originals (baseline / ours)  "
        "dev revisions (baseline / ours)  seconds"
    )
    first = None
    for originals, pairs in settings:
        started = time.perf_counter()
        result = measure(train, dev, originals, pairs, draws)
        seconds = time.perf_counter() - started
        base_original = result.get("baseline_original", float("nan"))
        base_revised = result.get("baseline_revised", float("nan"))
        print(
            f"{originals:>9}  {pairs:>13}  {base_original:>14.3f} / {result['original']:.3f}"
            f"  {base_revised:>17.3f} / {result['revised']:.3f}  {seconds:>14.1f}"
        )
        first = first or (originals, pairs, result)
    originals, pairs, result = first
    print(
        f"RESULT flip_classifier ratio={result['revised'] / result['baseline_revised']:.3f} "
        f"revised={result['revised']:.3f} baseline_revised={result['baseline_revised']:.3f} "
        f"original={result['original']:.3f} baseline_original={result['baseline_original']:.3f} "
        f"originals={originals} pairs={pairs}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
