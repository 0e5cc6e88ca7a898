"""CAD sentiment pairs (Kaushik et al., 2020) and the classifier-in-the-loop stand-in they train.

`sentiment_combined_paired/{train,dev}_paired.tsv` holds each IMDb review followed by
its human revision (same `batch_id`, the other label). The quality report perturbs
first sentences of dev originals and asks a TF-IDF + logistic regression model
(`generation.priority.BaselineClassifier`: word 1-2 grams), trained on both sides of
every train pair, whether x̂ reads as the other label: a cheap stand-in for the model
a researcher would put in the loop, not a judge of what x̂ really says.
"""

from __future__ import annotations

import csv
import random
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from generation.priority import BaselineClassifier
from generation.records import OriginalRecord

SENTIMENT_FOLDER = "sentiment_combined_paired"
CAD_LABELS = ("Negative", "Positive")  # the files' spelling, for label-directed prompts
# Where the data lies beside a checkout (../shared/data/cad).
DEFAULT_CAD = Path(__file__).resolve().parents[2] / "shared" / "data" / "cad"
# First sentences this long make prompts of the size the app sees; shorter ones are
# often titles ("Wow."), longer ones run-on paragraphs.
MIN_WORDS, MAX_WORDS = 6, 22
HEAD_CHARACTERS = 400


class CadDataMissing(FileNotFoundError):
    """The CAD folder or one of its sentiment files is not where it was asked for."""


@dataclass(frozen=True)
class SentimentPair:
    """One review and its human counterfactual, each with its own label."""

    key: str
    original: str
    original_label: str
    revised: str
    revised_label: str


def sentiment_pairs(data: Path, split: str) -> list[SentimentPair]:
    """The (original, revision) pairs of `split` ("train" or "dev"), in file order."""
    path = Path(data) / SENTIMENT_FOLDER / f"{split}_paired.tsv"
    if not path.is_file():
        raise CadDataMissing(f"The CAD sentiment file is missing: {path}")
    with path.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    pairs = []
    for index in range(0, len(rows) - 1, 2):
        first, second = rows[index], rows[index + 1]
        if first["batch_id"] != second["batch_id"]:
            raise ValueError(f"{path}: rows {index + 2} and {index + 3} are not one pair.")
        pairs.append(
            SentimentPair(
                key=f"{split}-{first['batch_id']}-{index // 2}",
                original=_plain(first["Text"]),
                original_label=first["Sentiment"],
                revised=_plain(second["Text"]),
                revised_label=second["Sentiment"],
            )
        )
    return pairs


def _plain(text: str) -> str:
    return " ".join(text.replace("<br />", " ").split())


class SentimentClassifier:
    """The stand-in: TF-IDF word 1-2 grams and logistic regression over whole reviews."""

    def __init__(self, seed: int = 0) -> None:
        self.model = BaselineClassifier(seed=seed)

    def fit(self, pairs: list[SentimentPair]) -> SentimentClassifier:
        texts = [text for pair in pairs for text in (pair.original, pair.revised)]
        labels = [label for pair in pairs for label in (pair.original_label, pair.revised_label)]
        self.model.fit(texts, labels)
        return self

    def predict(self, texts: list[str]) -> list[str]:
        if not texts:
            return []
        probabilities = self.model.predict_proba(texts)
        return [str(self.model.classes_[column]) for column in np.argmax(probabilities, axis=1)]

    def accuracy(self, texts: list[str], labels: list[str]) -> float:
        if not texts:
            return float("nan")
        predicted = self.predict(texts)
        return sum(p == g for p, g in zip(predicted, labels, strict=True)) / len(texts)


@dataclass(frozen=True)
class HeldOut:
    """Held-out originals (first sentences of dev reviews) and their human revisions."""

    originals: list[OriginalRecord]
    human: dict[str, str]  # original key -> the human revision's first sentence
    human_labels: dict[str, str]  # original key -> the revision's label
    pool: int  # dev pairs whose first sentences qualified, before sampling


def held_out_originals(
    pairs: list[SentimentPair],
    count: int,
    *,
    classifier: SentimentClassifier | None = None,
    seed: int = 0,
) -> HeldOut:
    """`count` first sentences of dev originals that a counterfactual can flip.

    A first sentence qualifies when it has MIN_WORDS..MAX_WORDS words, the human
    revision changed it (so the label lives in it, as far as the annotator saw), and
    the classifier, when given, already labels it right: a "flip" of x̂ then comes from
    the edit, not from a classifier that was wrong on x to begin with.
    """
    from generation.parsing import load_nlp

    nlp = load_nlp()
    # A first sentence of MAX_WORDS words fits in this many characters; the rest of a
    # review need not be parsed.
    heads = (text[:HEAD_CHARACTERS] for pair in pairs for text in (pair.original, pair.revised))
    firsts = [_first_sentence(doc) for doc in nlp.pipe(heads)]
    candidates = []
    for index, pair in enumerate(pairs):
        original, revised = firsts[2 * index], firsts[2 * index + 1]
        if MIN_WORDS <= len(original.split()) <= MAX_WORDS and original != revised:
            candidates.append((pair, original, revised))
    if classifier is not None and candidates:
        predicted = classifier.predict([original for _, original, _ in candidates])
        candidates = [
            entry
            for entry, label in zip(candidates, predicted, strict=True)
            if label == entry[0].original_label
        ]
    pool = len(candidates)
    random.Random(seed).shuffle(candidates)
    chosen = candidates[:count]
    return HeldOut(
        originals=[
            OriginalRecord(key=pair.key, text=original, label=pair.original_label)
            for pair, original, _ in chosen
        ],
        human={pair.key: revised for pair, _, revised in chosen},
        human_labels={pair.key: pair.revised_label for pair, _, _ in chosen},
        pool=pool,
    )


def _first_sentence(doc) -> str:
    return next(iter(doc.sents)).text.strip() if len(doc) else ""
