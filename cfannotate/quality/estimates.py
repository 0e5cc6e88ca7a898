"""Label estimates beside the majority vote, from the field's library (crowd-kit).

Dawid-Skene (1979) estimates each item's class jointly with each worker's confusion
matrix; GLAD (Whitehill et al., 2009) with each worker's skill and each item's
difficulty; MACE (Hovy et al., 2013) with each worker's chance of answering at
random. The vote stays what C.2 specifies (`voting.py`); these are reported beside it
where a campaign collects more than two judgments per counterfactual, so that a
reliable worker and an easy item can be told apart. No database here.
"""

import warnings
from collections.abc import Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
import pandas as pd
from crowdkit.aggregation import GLAD, MACE, DawidSkene
from crowdkit.metrics.data import alpha_krippendorff

ITERATIONS = 100


@dataclass(frozen=True)
class Estimate:
    dawid_skene: str
    dawid_skene_confidence: float
    glad: str
    mace: str


@contextmanager
def _crowd_kit_quietly():
    """crowd-kit 1.4.2 still passes `inplace=` and `copy=` to pandas, which pandas 3
    deprecates (Pandas4Warning) on every call; nothing on our side can fix that, so that
    one warning category is silenced around crowd-kit's calls, here only."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=pd.errors.Pandas4Warning)
        yield


def _frame(votes: Mapping[int, Sequence[tuple[int, str]]]) -> pd.DataFrame:
    rows = [
        (item, str(worker), label) for item, judged in votes.items() for worker, label in judged
    ]
    return pd.DataFrame(rows, columns=["task", "worker", "label"])


def label_estimates(votes: Mapping[int, Sequence[tuple[int, str]]]) -> dict[int, Estimate]:
    """{item: Estimate} from {item: [(worker, label), ...]}; items without votes are left out."""
    frame = _frame(votes)
    if frame.empty:
        return {}
    with _crowd_kit_quietly():
        dawid_skene = DawidSkene(n_iter=ITERATIONS)
        ds_labels = dawid_skene.fit_predict(frame)
        ds_confidence = dawid_skene.probas_.max(axis=1)
        # With every vote on one label, GLAD's prior of the labels no vote has is 0, and
        # numpy warns on its log (-inf) though the estimate is right: not a warning for
        # the campaign's log.
        with np.errstate(divide="ignore"):
            glad = GLAD(n_iter=ITERATIONS, silent=True).fit_predict(frame)
        # One start: MACE's default ten restarts cost ten times as much for the same labels
        # on crowd data of this size.
        mace = MACE(n_iter=ITERATIONS, n_restarts=1, random_state=0).fit_predict(frame)
    return {
        item: Estimate(
            dawid_skene=ds_labels[item],
            dawid_skene_confidence=float(ds_confidence[item]),
            glad=glad[item],
            mace=mace[item],
        )
        for item in ds_labels.index
    }


def krippendorff_alpha(items: Sequence[Sequence[str]]) -> float | None:
    """Krippendorff's alpha (nominal) over items with at least two judgments; None when
    it is undefined (no such item, or one category only)."""
    judged = {index: item for index, item in enumerate(items) if len(item) >= 2}
    if len({category for item in judged.values() for category in item}) < 2:
        return None
    rows = [
        (index, str(rater), category)
        for index, item in judged.items()
        for rater, category in enumerate(item)
    ]
    frame = pd.DataFrame(rows, columns=["task", "worker", "label"])
    with _crowd_kit_quietly():
        return float(alpha_krippendorff(frame))
