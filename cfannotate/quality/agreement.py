"""Inter-annotator agreement: raw pairwise agreement, Cohen's kappa (scikit-learn's),
Fleiss' kappa and Krippendorff's alpha (crowd-kit's), each with the items it covers.

Each item is the list of categories its annotators chose (labels, or "valid"/"invalid").
Crowd items are judged by different workers, so Cohen's kappa treats the first and the
second judgment of an item as two raters and covers items with exactly two judgments;
raw agreement, Fleiss' kappa and Krippendorff's alpha cover every item with two or more.
A statistic is None where it is undefined (no item qualifies, or one category only, so
chance agreement is total), and its note says which, in words.

Fleiss' kappa (Fleiss 1971, "Measuring nominal scale agreement among many raters",
Psychological Bulletin 76(5), 378-382), for N items, item i judged n_i times of which
n_ij chose category j:

    P_i = (sum_j n_ij^2 - n_i) / (n_i (n_i - 1))   agreeing pairs of item i's judgments
    P   = (1/N) sum_i P_i                           observed agreement
    p_j = sum_i n_ij / sum_i n_i                    share of all judgments in category j
    P_e = sum_j p_j^2                               chance agreement
    kappa = (P - P_e) / (1 - P_e)                   undefined when P_e = 1

Fleiss wrote it for the same n on every item; with unequal n_i this is its direct
generalisation (each item's P_i over its own n_i, every item weighted once), which is
exactly Fleiss (1971) when all n_i are equal. Krippendorff's alpha, beside it, is the
statistic designed for unequal counts. Neither crowd-kit 1.4 nor scikit-learn has
Fleiss' kappa, hence the few lines here.
"""

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from sklearn.metrics import cohen_kappa_score

from cfannotate.quality.estimates import krippendorff_alpha

TWO_OR_MORE = "two or more judgments"
EXACTLY_TWO = "exactly two judgments"


@dataclass(frozen=True)
class Basis:
    """The items a statistic is computed on."""

    items: int
    judgments: int  # over those items
    fewest: int  # judgments per item; 0 when no item qualifies
    most: int

    @classmethod
    def of(cls, items: Sequence[Sequence[str]]) -> "Basis":
        counts = [len(item) for item in items]
        return cls(
            items=len(counts),
            judgments=sum(counts),
            fewest=min(counts, default=0),
            most=max(counts, default=0),
        )

    def describe(self) -> str:
        each = str(self.fewest) if self.fewest == self.most else f"{self.fewest} to {self.most}"
        noun = "item" if self.items == 1 else "items"
        return (
            f"computed on {self.items} {noun} with {each} judgments each "
            f"({self.judgments} judgments)"
        )


@dataclass(frozen=True)
class Agreement:
    items: int  # items with at least two judgments
    raw: float | None  # share of agreeing pairs of judgments, averaged over items
    cohen_kappa: float | None
    fleiss_kappa: float | None
    krippendorff_alpha: float | None  # crowd-kit's, nominal
    basis: Basis  # raw agreement, Fleiss' kappa, Krippendorff's alpha
    cohen_basis: Basis  # Cohen's kappa
    raw_note: str
    cohen_kappa_note: str
    fleiss_kappa_note: str
    krippendorff_alpha_note: str

    @property
    def notes(self) -> list[str]:
        """One line per distinct note, naming the statistics it is about."""
        by_note: dict[str, list[str]] = {}
        for name, note in (
            ("Raw agreement", self.raw_note),
            ("Cohen's κ", self.cohen_kappa_note),
            ("Fleiss' κ", self.fleiss_kappa_note),
            ("Krippendorff's \N{GREEK SMALL LETTER ALPHA}", self.krippendorff_alpha_note),
        ):
            by_note.setdefault(note, []).append(name)
        return [f"{', '.join(names)}: {note}." for note, names in by_note.items()]


def _count_matrix(items: Sequence[Sequence[str]]) -> np.ndarray:
    categories = sorted({category for item in items for category in item})
    index = {category: position for position, category in enumerate(categories)}
    counts = np.zeros((len(items), len(categories)))
    for row, item in enumerate(items):
        for category, count in Counter(item).items():
            counts[row, index[category]] = count
    return counts


def _pair_agreement(counts: np.ndarray) -> np.ndarray:
    """P_i: the share of agreeing pairs among each item's judgments, (items,)."""
    raters = counts.sum(axis=1)
    return (np.square(counts).sum(axis=1) - raters) / (raters * (raters - 1))


def fleiss_kappa(items: Sequence[Sequence[str]]) -> float | None:
    """Fleiss' kappa over items with at least two judgments (formula in the module
    docstring); None when no item qualifies or chance agreement is total (P_e = 1)."""
    items = [item for item in items if len(item) >= 2]
    if not items:
        return None
    counts = _count_matrix(items)  # (items, categories)
    observed = float(_pair_agreement(counts).mean())
    shares = counts.sum(axis=0) / counts.sum()  # p_j, (categories,)
    if len(shares) < 2:  # one category: P_e = 1, and kappa is 0 / 0
        return None
    expected = float(np.square(shares).sum())
    return (observed - expected) / (1.0 - expected)


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
    return float(_pair_agreement(_count_matrix(items)).mean())


def _note(value: float | None, basis: Basis, requirement: str) -> str:
    if not basis.items:
        return f"not computed, as no item has {requirement}"
    if value is None:
        return f"undefined, as all {basis.judgments} judgments chose the same category"
    return basis.describe()


def agreement(items: Sequence[Sequence[str]]) -> Agreement:
    pooled = [item for item in items if len(item) >= 2]
    pairs = [item for item in pooled if len(item) == 2]
    basis, cohen_basis = Basis.of(pooled), Basis.of(pairs)
    raw = raw_agreement(pooled)
    cohen = cohen_kappa(pairs)
    fleiss = fleiss_kappa(pooled)
    alpha = krippendorff_alpha(pooled)
    cohen_note = _note(cohen, cohen_basis, EXACTLY_TWO)
    if cohen_basis.items and len(pooled) > len(pairs):
        cohen_note += f"; the {len(pooled) - len(pairs)} items judged more often are left out"
    return Agreement(
        items=basis.items,
        raw=raw,
        cohen_kappa=cohen,
        fleiss_kappa=fleiss,
        krippendorff_alpha=alpha,
        basis=basis,
        cohen_basis=cohen_basis,
        raw_note=_note(raw, basis, TWO_OR_MORE),
        cohen_kappa_note=cohen_note,
        fleiss_kappa_note=_note(fleiss, basis, TWO_OR_MORE),
        krippendorff_alpha_note=_note(alpha, basis, TWO_OR_MORE),
    )
