"""Benchmark: the classifier in the loop, with and without counterfactual pairs and the
sentiment lexicon.

A campaign's built-in baseline (`generation.label_classifiers.BaselineLabelClassifier`,
TF-IDF + logistic regression) predicts each candidate's label so that selection can
prefer the ones that flip it. It is fitted on the campaign's originals and, since
`cfannotate.candidates.predictions.baseline_training_rows`, on its labeled
counterfactuals too (gold answers, the crowd's kept labels, the researcher's own
pairs); for sentiment it also reads a lexicon score (VADER's compound). This measures
what each buys on held-out data. Fitted on N CAD sentiment *train* originals: alone
(the baseline, what a campaign had first), alone with the lexicon (a sentiment
campaign's cold start now), and with the lexicon plus the human revisions of M of them
(ours). Scored on CAD *dev*: how often it gives the originals their label, and the
human revisions theirs, which is the other one; the second is the job in the loop:
telling that an edit flipped the label. Both on whole reviews and on first sentences
whose revision changed them (what candidates are: `generation.cad_sentiment`). And as the
app uses it ("campaign"): the revisions of the campaign's *own* originals, which the
classifier was fitted on, predicted by n-grams fitted on every row (the app before) and
out of fold by original (`generation.label_classifiers.predict_out_of_fold`, now).

    python bench/flip_classifier.py --quick        # a few seconds
    python bench/flip_classifier.py                # every setting, 5 draws each

The last line reads `RESULT flip_classifier ratio=... revised=... baseline_revised=...
lexicon_revised=... original=... baseline_original=... sentences_revised=...
sentences_baseline_revised=... sentences_lexicon_revised=... campaign_revised=...
campaign_baseline_revised=... campaign_lexicon_revised=... originals=... pairs=...` for
the first setting (the demo's size: 40 originals, 36 of them with a counterfactual),
`ratio` being ours over the baseline on the review revisions.
"""

import argparse
import random
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # before bench/, whose generation.py would shadow the package

from generation.cad_sentiment import (  # noqa: E402
    DEFAULT_CAD,
    SENTIMENT_FOLDER,
    SentimentPair,
    held_out_originals,
    sentiment_pairs,
)
from generation.label_classifiers import (  # noqa: E402
    BaselineLabelClassifier,
    LabeledText,
    fit_baseline,
    predict_out_of_fold,
)

# (originals, of which with their human revision): the demo's campaign first.
SETTINGS = ((40, 36), (40, 10), (200, 36), (200, 200), (0, 200))


@dataclass(frozen=True)
class DevSet:
    """Texts to score: originals and their human revisions, each with its label."""

    originals: tuple[list[str], list[str]]
    revisions: tuple[list[str], list[str]]


def reviews(dev: list[SentimentPair]) -> DevSet:
    return DevSet(
        ([pair.original for pair in dev], [pair.original_label for pair in dev]),
        ([pair.revised for pair in dev], [pair.revised_label for pair in dev]),
    )


def first_sentences(dev: list[SentimentPair]) -> DevSet:
    """Every dev pair's first sentence whose human revision changed it (6-22 words)."""
    held = held_out_originals(dev, len(dev))
    keys = [original.key for original in held.originals]
    return DevSet(
        ([o.text for o in held.originals], [o.label for o in held.originals]),
        ([held.human[key] for key in keys], [held.human_labels[key] for key in keys]),
    )


def accuracy(classifier, texts: list[str], labels: list[str]) -> float:
    predicted = classifier.predict(texts)
    return statistics.fmean(p.label == label for p, label in zip(predicted, labels, strict=True))


def fitted(
    originals: list[SentimentPair], paired: list[SentimentPair], *, lexicon: bool = True
) -> BaselineLabelClassifier:
    """Fitted on the originals' texts and the human revisions of `paired`."""
    texts = [pair.original for pair in originals] + [pair.revised for pair in paired]
    labels = [pair.original_label for pair in originals] + [pair.revised_label for pair in paired]
    counterfactual = [False] * len(originals) + [True] * len(paired)
    groups = [pair.key for pair in originals] + [pair.key for pair in paired]
    return BaselineLabelClassifier(sentiment_lexicon=lexicon).fit(
        texts, labels, counterfactual=counterfactual, groups=groups
    )


def measure(train, dev: DevSet, originals: int, pairs: int, draws: int) -> dict[str, float]:
    """Mean accuracies over `draws` random draws of the training pairs: `original` and
    `revised` for ours, prefixed `baseline_` and `lexicon_` for the other two."""
    figures: dict[str, list[float]] = {}
    for draw in range(draws):
        drawn = random.Random(draw).sample(train, min(len(train), max(originals, pairs)))
        runs = {"": fitted(drawn[:originals], drawn[:pairs])}
        if originals:
            runs["baseline_"] = fitted(drawn[:originals], [], lexicon=False)
            runs["lexicon_"] = fitted(drawn[:originals], [])
        for prefix, classifier in runs.items():
            for side, (texts, labels) in (("original", dev.originals), ("revised", dev.revisions)):
                figures.setdefault(prefix + side, []).append(accuracy(classifier, texts, labels))
    return {name: statistics.fmean(values) for name, values in figures.items()}


def measure_campaign(train, originals: int, pairs: int, draws: int) -> dict[str, float]:
    """What the app faces: fitted on N originals (and the revisions of M of them), how
    often the revisions of the *other* originals, the campaign's own originals, get their
    new label. `baseline_revised`: n-grams fitted on every row, as the app predicted
    before; `lexicon_revised`: originals alone, with the lexicon, out of fold by original;
    `revised` (ours): with the pairs too, as the app predicts now."""
    if originals <= pairs:
        return {}
    figures: dict[str, list[float]] = {}
    for draw in range(draws):
        drawn = random.Random(draw).sample(train, originals)
        rows = [LabeledText(p.original, p.original_label, group=p.key) for p in drawn]
        alone = list(rows)
        rows += [
            LabeledText(p.revised, p.revised_label, group=p.key, counterfactual=True)
            for p in drawn[:pairs]
        ]
        targets = drawn[pairs:]
        texts, groups = [p.revised for p in targets], [p.key for p in targets]
        truth = [p.revised_label for p in targets]
        before = fit_baseline(rows, pair_task=False, sentiment_lexicon=False).predict(texts)
        runs = {
            "baseline_revised": before,
            "lexicon_revised": predict_out_of_fold(
                alone, texts, None, groups, sentiment_lexicon=True
            ),
            "revised": predict_out_of_fold(rows, texts, None, groups, sentiment_lexicon=True),
        }
        for name, predicted in runs.items():
            right = [p is not None and p.label == t for p, t in zip(predicted, truth, strict=True)]
            figures.setdefault(name, []).append(statistics.fmean(right))
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
    dev_sets = {"reviews": reviews(dev), "sentences": first_sentences(dev)}
    print(
        f"CAD sentiment: {len(train)} train pairs, {len(dev)} dev pairs "
        f"({len(dev_sets['sentences'].originals[0])} first sentences changed by the "
        f"revision); {draws} draws each"
    )
    print("accuracy: baseline (n-grams) / + lexicon / ours (+ lexicon + pairs)")
    print(
        "originals  with revision  scored on   dev originals          "
        "dev revisions          seconds"
    )
    first = None
    for originals, pairs in settings:
        results = {}
        for name, dev_set in dev_sets.items():
            started = time.perf_counter()
            result = measure(train, dev_set, originals, pairs, draws)
            results[name] = result
            print(
                f"{originals:>9}  {pairs:>13}  {name:<9}  {_three(result, 'original')}  "
                f"{_three(result, 'revised')}  {time.perf_counter() - started:>7.1f}"
            )
        started = time.perf_counter()
        results["campaign"] = measure_campaign(train, originals, pairs, draws)
        if results["campaign"]:
            print(
                f"{originals:>9}  {pairs:>13}  {'campaign':<9}  {'-':^21}  "
                f"{_three(results['campaign'], 'revised')}  {time.perf_counter() - started:>7.1f}"
            )
        first = first or (originals, pairs, results)
    originals, pairs, results = first
    review, sentence, campaign = results["reviews"], results["sentences"], results["campaign"]
    print(
        f"RESULT flip_classifier ratio={review['revised'] / review['baseline_revised']:.3f} "
        f"revised={review['revised']:.3f} baseline_revised={review['baseline_revised']:.3f} "
        f"lexicon_revised={review['lexicon_revised']:.3f} "
        f"original={review['original']:.3f} baseline_original={review['baseline_original']:.3f} "
        f"sentences_revised={sentence['revised']:.3f} "
        f"sentences_baseline_revised={sentence['baseline_revised']:.3f} "
        f"sentences_lexicon_revised={sentence['lexicon_revised']:.3f} "
        f"campaign_revised={campaign['revised']:.3f} "
        f"campaign_baseline_revised={campaign['baseline_revised']:.3f} "
        f"campaign_lexicon_revised={campaign['lexicon_revised']:.3f} "
        f"originals={originals} pairs={pairs}"
    )
    return 0


def _three(result: dict[str, float], side: str) -> str:
    nan = float("nan")
    values = (result.get(f"baseline_{side}", nan), result.get(f"lexicon_{side}", nan), result[side])
    return " / ".join(f"{value:.3f}" for value in values)


if __name__ == "__main__":
    raise SystemExit(main())
