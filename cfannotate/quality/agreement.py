"""Inter-annotator agreement: raw pairwise agreement, Cohen's kappa (scikit-learn's),
Fleiss' kappa and Krippendorff's alpha (crowd-kit's).

Each item is the list of categories its annotators chose (labels, or "valid"/"invalid").
Crowd items are judged by different workers, so Cohen's kappa treats the first and the
second judgment of an item as two raters (items with exactly two judgments), and Fleiss'
kappa uses the variable-raters form: items with at least two judgments, each weighted by
its own pairs. Both are None where chance agreement is total (one category only).
"""

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from sklearn.metrics import cohen_kappa_score

from cfannotate.quality.estimates import krippendorff_alpha


@dataclass(frozen=True)
class Agreement:
    items: int  # items with at least two judgments
    raw: float | None  # share of agreeing pairs of judgments, averaged over items
    cohen_kappa: float | None
    fleiss_kappa: float | None
    krippendorff_alpha: float | None  # crowd-kit's, nominal


def _count_matrix(items: Sequence[Sequence[str]]) -> np.ndarray:
    categories = sorted({category for item in items for category in item})
    index = {category: position for position, category in enumerate(categories)}
    counts = np.zeros((len(items), len(categories)))
    for row, item in enumerate(items):
        for category, count in Counter(item).items():
            counts[row, index[category]] = count
    return counts


def fleiss_kappa(items: Sequence[Sequence[str]]) -> float | None:
    items = [item for item in items if len(item) >= 2]
    if not items:
        return None
    counts = _count_matrix(items)  # (items, categories)
    raters = counts.sum(axis=1)  # (items,)
    pair_agreement = (np.square(counts).sum(axis=1) - raters) / (raters * (raters - 1))
    observed = pair_agreement.mean()
    shares = counts.sum(axis=0) / raters.sum()
    expected = float(np.square(shares).sum())
    if expected >= 1.0:
        return None
    return float((observed - expected) / (1.0 - expected))


def cohen_kappa(items: Sequence[Sequence[str]]) -> float | None:
    """scikit-learn's Cohen's kappa, the first and second judgment of each item with
    exactly two as the two raters; None when only one category was ever chosen."""
    pairs = [item for item in items if len(item) == 2]
    if len({category for pair in pairs for category in pair}) < 2:
        return None  # chance agreement is total: kappa is undefined
    first, second = zip(*pairs, strict=True)
    return float(cohen_kappa_score(first, second))


def raw_agreement(items: Sequence[Sequence[str]]) -> float | None:
    items = [item for item in items if len(item) >= 2]
    if not items:
        return None
    counts = _count_matrix(items)
    raters = counts.sum(axis=1)
    return float(((np.square(counts).sum(axis=1) - raters) / (raters * (raters - 1))).mean())


def agreement(items: Sequence[Sequence[str]]) -> Agreement:
    return Agreement(
        items=sum(1 for item in items if len(item) >= 2),
        raw=raw_agreement(items),
        cohen_kappa=cohen_kappa(items),
        fleiss_kappa=fleiss_kappa(items),
        krippendorff_alpha=krippendorff_alpha(items),
    )
