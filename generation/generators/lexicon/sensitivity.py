"""Causal-term importance by sensitivity: how much a classifier's gold score drops without a term.

Equation 1 of the paper (after Jin et al.'s sampling and occlusion): the importance of
a phrase p in a sentence s is (l(s) - l(s without p)) / l(s), where l is the model's
score for the gold label. The classifier is pluggable: a TF-IDF baseline fitted on the
batch's labelled originals, or VADER's rule-based scorer, which needs no training.
"""

from collections.abc import Sequence
from typing import Protocol

import numpy as np

from generation.generators.lexicon.opinion_lexicon import NEGATIVE, POSITIVE
from generation.priority import BaselineClassifier

CLASSIFIERS = ("baseline", "vader")
_FLOOR = 1e-9  # a gold score of exactly 0 would make the relative drop undefined


class ClassifierUnavailable(ValueError):
    """The chosen classifier cannot be built from this batch (the reason says why)."""


class SentimentScorer(Protocol):
    def positive_probabilities(
        self, texts: Sequence[str], contexts: Sequence[str]
    ) -> np.ndarray: ...


class BaselineScorer:
    """The scikit-learn baseline of `generation.priority`, fitted on positive/negative originals."""

    def __init__(
        self, texts: Sequence[str], polarities: Sequence[str], contexts: Sequence[str]
    ) -> None:
        if set(polarities) != {POSITIVE, NEGATIVE}:
            raise ClassifierUnavailable(
                "the baseline classifier learns from the batch's originals and needs both "
                f"positive and negative ones (got only {sorted(set(polarities)) or 'none'}); "
                "use classifier 'vader' for a one-sided batch"
            )
        self.classifier = BaselineClassifier().fit(texts, polarities, contexts)
        self.positive_column = list(self.classifier.classes_).index(POSITIVE)

    def positive_probabilities(self, texts: Sequence[str], contexts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros(0)
        return self.classifier.predict_proba(texts, contexts)[:, self.positive_column]


class VaderScorer:
    """VADER's compound score in [-1, 1] mapped onto a probability of positive in [0, 1]."""

    def __init__(self) -> None:
        from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

        self.analyzer = SentimentIntensityAnalyzer()

    def positive_probabilities(self, texts: Sequence[str], contexts: Sequence[str]) -> np.ndarray:
        # The context of a pair task does not change the sentiment of the text itself.
        compounds = [self.analyzer.polarity_scores(text)["compound"] for text in texts]
        return (np.asarray(compounds, dtype=float) + 1.0) / 2.0


def build_scorer(
    name: str, texts: Sequence[str], polarities: Sequence[str], contexts: Sequence[str]
) -> SentimentScorer:
    if name == "baseline":
        return BaselineScorer(texts, polarities, contexts)
    if name == "vader":
        return VaderScorer()
    raise ValueError(f"unknown classifier {name!r}; choose one of {', '.join(CLASSIFIERS)}")


def gold_probabilities(
    scorer: SentimentScorer, texts: Sequence[str], contexts: Sequence[str], polarity: str
) -> np.ndarray:
    """The score l(·) of Eq. 1: each text's probability of the gold polarity."""
    positive = scorer.positive_probabilities(texts, contexts)
    return positive if polarity == POSITIVE else 1.0 - positive


def relative_drops(before: float, after: np.ndarray) -> np.ndarray:
    """Eq. 1 for one sentence: (l(s) - l(s without p)) / l(s) for each masked version."""
    return (before - np.asarray(after, dtype=float)) / max(before, _FLOOR)
