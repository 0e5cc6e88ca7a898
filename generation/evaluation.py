"""Counterfactuals as a test set and as training data: Polyjuice §4.3 (Table 2) and §4.4 (Table 3).

Table 2 scores one model's predictions on the originals and on their contrast sets
(`contrast_report`); the predictions come from the researcher or from the TF-IDF
baseline, cross-fitted so that it never predicts an original it was trained on
(`cross_fitted_predictions`) or trained on a separate set (`trained_predictions`).
Table 3 trains the baseline twice per random split, on n originals plus m more
originals (comp) or plus m counterfactuals (aug), and scores both on held-out
originals and held-out contrast sets (`augmentation_report`).

What the figures mean and how the splits are drawn: `docs/evaluation.md`.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from sklearn.model_selection import StratifiedKFold

from generation.priority import BaselineClassifier
from generation.records import OriginalRecord

# A predicted label, or None when the model did not commit to one (a tie at the top),
# which counts as wrong.
Prediction = str | None
# Bootstrap replicates drawn per batch: bounds memory to about 8 bytes x this many entries.
_BOOTSTRAP_BATCH_ENTRIES = 1 << 21


@dataclass(frozen=True)
class LabeledCounterfactual:
    """A kept counterfactual x̂ with its crowd label; its context is its original's."""

    key: str
    original_key: str
    text: str
    label: str


@dataclass(frozen=True)
class BootstrapConfig:
    """Percentile bootstrap over originals, each drawn with all its counterfactuals."""

    replicates: int = 1000  # resamples; 1000 gives intervals stable to about half a point
    confidence: float = 0.95  # two-sided coverage of the interval
    seed: int = 0  # fixed, so a rerun on the same data prints the same interval

    def __post_init__(self) -> None:
        if self.replicates < 1:
            raise ValueError(f"Bootstrap replicates must be at least 1, got {self.replicates}.")
        if not 0 < self.confidence < 1:
            raise ValueError(
                f"Confidence must lie strictly between 0 and 1, got {self.confidence}."
            )


@dataclass(frozen=True)
class Figure:
    """A share with its counts and bootstrap interval; `correct`/`total` None for a difference."""

    value: float
    low: float
    high: float
    correct: int | None = None
    total: int | None = None


@dataclass(frozen=True)
class ContrastReport:
    """One row of Polyjuice Table 2."""

    originals: int  # originals with at least one contrast counterfactual ("Orig. set")
    counterfactuals: int  # the contrast set
    original_accuracy: Figure
    contrast_accuracy: Figure
    drop: Figure  # contrast minus original accuracy: negative when the model does worse
    consistency: Figure  # right on the original and on every one of its contrast x̂
    all_originals_accuracy: Figure | None  # every original with a prediction ("Dev.")
    bootstrap: BootstrapConfig


@dataclass(frozen=True)
class Predictions:
    """A model's labels for originals and counterfactuals, each keyed by its own key."""

    originals: dict[str, Prediction]
    counterfactuals: dict[str, Prediction]


def contrast_set(
    originals: Sequence[OriginalRecord], counterfactuals: Sequence[LabeledCounterfactual]
) -> dict[str, list[LabeledCounterfactual]]:
    """Original key -> its counterfactuals whose label differs from the original's (§4.3)."""
    by_key = _originals_by_key(originals)
    groups: dict[str, list[LabeledCounterfactual]] = defaultdict(list)
    for counterfactual in counterfactuals:
        original = by_key.get(counterfactual.original_key)
        if original is None:
            raise ValueError(
                f"Counterfactual {counterfactual.key!r} belongs to original "
                f"{counterfactual.original_key!r}, which is not among the originals."
            )
        if counterfactual.label != original.label:
            groups[counterfactual.original_key].append(counterfactual)
    return dict(groups)


def _originals_by_key(originals: Sequence[OriginalRecord]) -> dict[str, OriginalRecord]:
    by_key: dict[str, OriginalRecord] = {}
    for original in originals:
        if original.key in by_key:
            raise ValueError(f"Original {original.key!r} appears twice.")
        by_key[original.key] = original
    return by_key


def _missing(keys: Sequence[str], predicted: Mapping[str, Prediction], what: str) -> None:
    absent = [key for key in keys if key not in predicted]
    if absent:
        shown = ", ".join(repr(key) for key in absent[:10])
        raise ValueError(f"No prediction for {len(absent)} {what}, e.g. {shown}.")


def contrast_report(
    originals: Sequence[OriginalRecord],
    counterfactuals: Sequence[LabeledCounterfactual],
    predictions: Predictions,
    *,
    bootstrap: BootstrapConfig = BootstrapConfig(),
) -> ContrastReport:
    """Table 2: accuracy on the originals and on their contrast sets, the drop, consistency.

    Only originals with at least one contrast counterfactual make up the "Orig. set", as
    in Polyjuice; `all_originals_accuracy` covers every original that has a prediction.
    Consistency follows Gardner et al. (2020): an original counts when the model is right
    on it and on all its contrast counterfactuals.
    """
    groups = contrast_set(originals, counterfactuals)
    if not groups:
        raise ValueError(
            "There is no contrast set: no kept counterfactual has a label different from its "
            "original's."
        )
    by_key = _originals_by_key(originals)
    keys = sorted(groups)
    _missing(keys, predictions.originals, "original(s) of the contrast set")
    contrast_keys = [counterfactual.key for key in keys for counterfactual in groups[key]]
    _missing(contrast_keys, predictions.counterfactuals, "contrast counterfactual(s)")

    original_right = np.array(
        [predictions.originals[key] == by_key[key].label for key in keys], dtype=bool
    )
    contrast_total = np.array([len(groups[key]) for key in keys])
    contrast_right = np.array(
        [sum(predictions.counterfactuals[c.key] == c.label for c in groups[key]) for key in keys]
    )
    consistent = original_right & (contrast_right == contrast_total)

    def statistics(index: np.ndarray) -> np.ndarray:
        # index: (replicates, originals) resampled positions -> (replicates, 4) figures
        original = original_right[index].mean(axis=1)
        contrast = contrast_right[index].sum(axis=1) / contrast_total[index].sum(axis=1)
        return np.stack(
            [original, contrast, contrast - original, consistent[index].mean(axis=1)], 1
        )

    point = statistics(np.arange(len(keys))[None, :])[0]
    low, high = _bootstrap_interval(statistics, len(keys), bootstrap)
    figures = [Figure(float(point[i]), float(low[i]), float(high[i])) for i in range(4)]

    judged = [original for original in originals if original.key in predictions.originals]
    all_originals = None
    if judged:
        right = np.array([predictions.originals[o.key] == o.label for o in judged], dtype=bool)
        all_originals = _share(right, bootstrap)
    return ContrastReport(
        originals=len(keys),
        counterfactuals=len(contrast_keys),
        original_accuracy=_with_counts(figures[0], int(original_right.sum()), len(keys)),
        contrast_accuracy=_with_counts(
            figures[1], int(contrast_right.sum()), int(contrast_total.sum())
        ),
        drop=figures[2],
        consistency=_with_counts(figures[3], int(consistent.sum()), len(keys)),
        all_originals_accuracy=all_originals,
        bootstrap=bootstrap,
    )


def _with_counts(figure: Figure, correct: int, total: int) -> Figure:
    return Figure(figure.value, figure.low, figure.high, correct=correct, total=total)


def _share(right: np.ndarray, bootstrap: BootstrapConfig) -> Figure:
    def statistics(index: np.ndarray) -> np.ndarray:
        return right[index].mean(axis=1)[:, None]

    low, high = _bootstrap_interval(statistics, len(right), bootstrap)
    return Figure(float(right.mean()), float(low[0]), float(high[0]), int(right.sum()), len(right))


def _bootstrap_interval(
    statistics: Callable[[np.ndarray], np.ndarray], size: int, config: BootstrapConfig
) -> tuple[np.ndarray, np.ndarray]:
    """Percentile interval of `statistics` over `config.replicates` resamples of `size` items."""
    rng = np.random.default_rng(config.seed)
    batch = max(1, _BOOTSTRAP_BATCH_ENTRIES // max(size, 1))
    values = []
    for start in range(0, config.replicates, batch):
        rows = min(batch, config.replicates - start)
        values.append(statistics(rng.integers(0, size, size=(rows, size))))
    replicates = np.concatenate(values)
    tail = (1 - config.confidence) / 2 * 100
    return np.percentile(replicates, tail, axis=0), np.percentile(replicates, 100 - tail, axis=0)


# Predictions from the baseline ------------------------------------------------------------


def labels_from_probabilities(
    probabilities: np.ndarray, classes: Sequence[str]
) -> list[Prediction]:
    """The most probable class of each row; None where the top is tied (no choice made)."""
    probabilities = np.asarray(probabilities, dtype=float)
    labels: list[Prediction] = []
    for row in probabilities:
        best = np.flatnonzero(row == row.max())
        labels.append(str(classes[best[0]]) if len(best) == 1 else None)
    return labels


def _contexts(originals: Sequence[OriginalRecord]) -> list[str] | None:
    contexts = [original.context for original in originals]
    return contexts if any(contexts) else None


def _contexts_of(
    examples: Sequence[OriginalRecord | LabeledCounterfactual], context_of: Mapping[str, str]
) -> list[str]:
    """The fixed context of each example: its own for an original, its original's for an x̂."""
    return [
        context_of[e.original_key if isinstance(e, LabeledCounterfactual) else e.key]
        for e in examples
    ]


def _predict(
    model: BaselineClassifier,
    examples: Sequence[OriginalRecord | LabeledCounterfactual],
    context_of: Mapping[str, str],
    uses_context: bool,
) -> list[Prediction]:
    if not examples:
        return []
    texts = [example.text for example in examples]
    contexts = _contexts_of(examples, context_of) if uses_context else None
    return labels_from_probabilities(model.predict_proba(texts, contexts), model.classes_)


def _fit(
    examples: Sequence[OriginalRecord | LabeledCounterfactual],
    context_of: Mapping[str, str],
    uses_context: bool,
    seed: int,
    what: str,
) -> BaselineClassifier:
    labels = [example.label for example in examples]
    if len(set(labels)) < 2:
        raise ValueError(
            f"{what} has {len(examples)} example(s) of only {sorted(set(labels))}; the baseline "
            "needs at least two labels to learn anything."
        )
    contexts = _contexts_of(examples, context_of) if uses_context else None
    return BaselineClassifier(seed=seed).fit([e.text for e in examples], labels, contexts)


def cross_fitted_predictions(
    originals: Sequence[OriginalRecord],
    counterfactuals: Sequence[LabeledCounterfactual],
    *,
    folds: int = 5,
    seed: int = 0,
) -> Predictions:
    """The baseline's labels, each from a model that saw neither the example nor its original.

    Originals are split into stratified folds; the model fitted on the other folds labels
    a fold's originals and their counterfactuals. Folds shrink to the rarest label's count,
    so every fold's training part holds every label.
    """
    if folds < 2:
        raise ValueError(f"Cross-fitting needs at least 2 folds, got {folds}.")
    by_key = _originals_by_key(originals)
    labels = np.array([original.label for original in originals], dtype=object)
    names, counts = np.unique(labels, return_counts=True) if len(labels) else ([], [])
    if len(names) < 2:
        raise ValueError(
            f"The originals carry only {sorted(names)}; a baseline trained on them cannot "
            "predict anything else. Upload a training set or the model's predictions instead."
        )
    rarest = int(np.argmin(counts))
    if counts[rarest] < 2:
        raise ValueError(
            f"Label {names[rarest]!r} has a single original; cross-fitting needs at least two of "
            "each label so that every fold's model has seen it."
        )
    counterfactuals_of: dict[str, list[LabeledCounterfactual]] = defaultdict(list)
    for counterfactual in counterfactuals:
        if counterfactual.original_key not in by_key:
            raise ValueError(
                f"Counterfactual {counterfactual.key!r} belongs to original "
                f"{counterfactual.original_key!r}, which is not among the originals."
            )
        counterfactuals_of[counterfactual.original_key].append(counterfactual)
    context_of = {original.key: original.context for original in originals}
    uses_context = _contexts(originals) is not None
    splitter = StratifiedKFold(
        n_splits=min(folds, int(counts[rarest])), shuffle=True, random_state=seed
    )
    predicted = Predictions(originals={}, counterfactuals={})
    for fold, (train, held_out) in enumerate(splitter.split(np.zeros(len(labels)), labels)):
        model = _fit(
            [originals[i] for i in train], context_of, uses_context, seed, f"Fold {fold + 1}"
        )
        held_originals = [originals[i] for i in held_out]
        held_counterfactuals = [c for o in held_originals for c in counterfactuals_of[o.key]]
        for original, label in zip(
            held_originals, _predict(model, held_originals, context_of, uses_context), strict=True
        ):
            predicted.originals[original.key] = label
        for counterfactual, label in zip(
            held_counterfactuals,
            _predict(model, held_counterfactuals, context_of, uses_context),
            strict=True,
        ):
            predicted.counterfactuals[counterfactual.key] = label
    return predicted


def trained_predictions(
    training: Sequence[OriginalRecord],
    originals: Sequence[OriginalRecord],
    counterfactuals: Sequence[LabeledCounterfactual],
    *,
    seed: int = 0,
) -> Predictions:
    """The baseline fitted on a separate training set labels every original and counterfactual."""
    if not training:
        raise ValueError("The training set is empty.")
    context_of = {original.key: original.context for original in originals}
    training_context = {f"train {i}": r.context for i, r in enumerate(training)}
    uses_context = _contexts(training) is not None or _contexts(originals) is not None
    rows = [
        OriginalRecord(key=f"train {i}", text=r.text, label=r.label, context=r.context)
        for i, r in enumerate(training)
    ]
    model = _fit(rows, training_context, uses_context, seed, "The training set")
    return Predictions(
        originals=dict(
            zip(
                [o.key for o in originals],
                _predict(model, originals, context_of, uses_context),
                strict=True,
            )
        ),
        counterfactuals=dict(
            zip(
                [c.key for c in counterfactuals],
                _predict(model, counterfactuals, context_of, uses_context),
                strict=True,
            )
        ),
    )


# Table 3: augmentation --------------------------------------------------------------------


class SizeError(ValueError):
    """The sizes asked for (`n`, `m`, `test_fraction`) do not fit the data; `options` names
    the AugmentationConfig fields to change."""

    def __init__(self, message: str, *, options: tuple[str, ...]) -> None:
        super().__init__(message)
        self.options = options


@dataclass(frozen=True)
class AugmentationConfig:
    """Sizes and splits of the comp/aug experiment; None sizes are resolved from the data."""

    n: int | None = None  # originals in both training sets, the m x̂'s originals included
    m: int | None = None  # counterfactuals added (aug), or further originals instead (comp)
    test_fraction: float = 0.3  # share of originals held out, with their counterfactuals
    seeds: tuple[int, ...] = (0, 1, 2)  # one random split and one model seed per entry

    def __post_init__(self) -> None:
        if not 0 < self.test_fraction < 1:
            raise ValueError(
                f"test_fraction must lie strictly between 0 and 1, got {self.test_fraction}."
            )
        if not self.seeds:
            raise ValueError("Give at least one seed.")
        if len(set(self.seeds)) != len(self.seeds):
            raise ValueError(f"Seeds repeat: {list(self.seeds)}.")
        for name in ("n", "m"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise ValueError(f"{name} must be at least 1, got {value}.")


@dataclass(frozen=True)
class SplitResult:
    """One split: accuracies of comp and aug on the held-out originals and contrast set."""

    seed: int
    n: int
    m: int
    test_originals: int
    test_contrast: int
    comp_original_accuracy: float
    comp_contrast_accuracy: float
    aug_original_accuracy: float
    aug_contrast_accuracy: float


@dataclass(frozen=True)
class MeanStd:
    mean: float
    std: float  # sample standard deviation over splits; 0 with a single split


@dataclass(frozen=True)
class AugmentationReport:
    """Polyjuice Table 3 on this campaign: rows comp and aug, columns the two test sets."""

    n: int
    m: int
    test_fraction: float
    seeds: tuple[int, ...]
    comp_original_accuracy: MeanStd
    comp_contrast_accuracy: MeanStd
    aug_original_accuracy: MeanStd
    aug_contrast_accuracy: MeanStd
    splits: list[SplitResult] = field(default_factory=list)


@dataclass(frozen=True)
class _Split:
    seed: int
    train: list[OriginalRecord]  # training-side originals, augmentation ones included
    groups: list[list[LabeledCounterfactual]]  # counterfactuals of training-side aug originals
    test: list[OriginalRecord]
    test_contrast: list[LabeledCounterfactual]


def _draw_split(
    seed: int,
    augmentable: list[OriginalRecord],
    others: list[OriginalRecord],
    counterfactuals_of: Mapping[str, list[LabeledCounterfactual]],
    test_fraction: float,
) -> _Split:
    rng = np.random.default_rng(seed)
    shuffled_aug = [augmentable[i] for i in rng.permutation(len(augmentable))]
    shuffled_other = [others[i] for i in rng.permutation(len(others))]
    # At least one augmentable original on each side: one gives x̂ to train on, one a contrast set.
    test_aug = min(max(1, round(len(shuffled_aug) * test_fraction)), len(shuffled_aug) - 1)
    test_other = round(len(shuffled_other) * test_fraction)
    train_aug = shuffled_aug[test_aug:]
    groups = []
    for original in train_aug:
        # Flips first: a group cut short at m still holds a label flip (§4.4's condition).
        group = counterfactuals_of[original.key]
        groups.append(sorted(group, key=lambda c: c.label == original.label))
    test = shuffled_aug[:test_aug] + shuffled_other[:test_other]
    return _Split(
        seed=seed,
        train=train_aug + shuffled_other[test_other:],
        groups=groups,
        test=test,
        test_contrast=[
            c
            for original in shuffled_aug[:test_aug]
            for c in counterfactuals_of[original.key]
            if c.label != original.label
        ],
    )


def _resolve_sizes(config: AugmentationConfig, splits: list[_Split]) -> tuple[int, int]:
    """(n, m): the ones given, or the largest that every split can honour."""
    fewest_train = min(len(split.train) for split in splits)
    fewest_counterfactuals = min(sum(len(g) for g in split.groups) for split in splits)
    n, m = config.n, config.m
    if m is None:
        room = fewest_train // 2 if n is None else fewest_train - n
        m = min(fewest_counterfactuals, room)
        if m < 1:
            raise SizeError(
                f"No room for counterfactuals: the training side has {fewest_train} originals, "
                f"n = {n} of them leave none for comp's extra originals.",
                options=("n",),
            )
    if n is None:
        n = fewest_train - m
    if m > fewest_counterfactuals:
        raise SizeError(
            f"m = {m} counterfactuals asked for, but a split's training side has only "
            f"{fewest_counterfactuals}; lower m or test_fraction.",
            options=("m",),
        )
    if n + m > fewest_train:
        given = tuple(name for name in ("n", "m") if getattr(config, name) is not None)
        raise SizeError(
            f"n + m = {n + m} originals are needed for comp, but a split's training side has "
            f"only {fewest_train}; lower n or m, or test_fraction.",
            options=given or ("test_fraction",),
        )
    return n, m


def _accuracy(predicted: Sequence[Prediction], examples: Sequence) -> float:
    return float(np.mean([p == e.label for p, e in zip(predicted, examples, strict=True)]))


def _run_split(split: _Split, n: int, m: int, context_of: Mapping[str, str], uses_context: bool):
    rng = np.random.default_rng(split.seed + 1)  # a stream apart from the split's own
    added: list[LabeledCounterfactual] = []
    used: list[str] = []
    for group in split.groups:
        if len(added) >= m:
            break
        added.extend(group[: m - len(added)])
        used.append(group[0].original_key)
    if len(used) > n:
        raise SizeError(
            f"n = {n} is smaller than the {len(used)} originals whose counterfactuals aug "
            f"uses (split seed {split.seed}); aug always includes them (§4.4). Raise n.",
            options=("n",),
        )
    used_set = set(used)
    rest = [o for o in split.train if o.key not in used_set]
    rest = [rest[i] for i in rng.permutation(len(rest))]
    base = [o for o in split.train if o.key in used_set] + rest[: n - len(used)]
    extra = rest[n - len(used) : n - len(used) + m]
    where = f"split seed {split.seed}"
    comp = _fit(
        base + extra, context_of, uses_context, split.seed, f"comp's training set ({where})"
    )
    aug = _fit(base + added, context_of, uses_context, split.seed, f"aug's training set ({where})")
    scores = {}
    for name, model in (("comp", comp), ("aug", aug)):
        scores[f"{name}_original_accuracy"] = _accuracy(
            _predict(model, split.test, context_of, uses_context), split.test
        )
        scores[f"{name}_contrast_accuracy"] = _accuracy(
            _predict(model, split.test_contrast, context_of, uses_context), split.test_contrast
        )
    return SplitResult(
        seed=split.seed,
        n=n,
        m=m,
        test_originals=len(split.test),
        test_contrast=len(split.test_contrast),
        **scores,
    )


def _mean_std(values: Sequence[float]) -> MeanStd:
    array = np.asarray(values, dtype=float)
    std = float(array.std(ddof=1)) if len(array) > 1 else 0.0
    return MeanStd(mean=float(array.mean()), std=std if math.isfinite(std) else 0.0)


def augmentation_report(
    originals: Sequence[OriginalRecord],
    counterfactuals: Sequence[LabeledCounterfactual],
    *,
    config: AugmentationConfig = AugmentationConfig(),
) -> AugmentationReport:
    """Table 3: comp (n + m originals) against aug (n originals + m x̂), mean ± std over splits.

    `counterfactuals` are the kept x̂; only those of originals with at least one label
    flip form the augmentation set (§4.4). Each split holds out `test_fraction` of the
    originals: the held-out augmentation originals' flips are the contrast test set, and
    none of their counterfactuals is trained on.
    """
    by_key = _originals_by_key(originals)
    flips = contrast_set(originals, counterfactuals)
    counterfactuals_of: dict[str, list[LabeledCounterfactual]] = defaultdict(list)
    for counterfactual in counterfactuals:
        if counterfactual.original_key in flips:
            counterfactuals_of[counterfactual.original_key].append(counterfactual)
    augmentable = [by_key[key] for key in sorted(flips)]
    if len(augmentable) < 2:
        raise ValueError(
            f"{len(augmentable)} original(s) have a label-flipping counterfactual; Table 3 needs "
            "at least two: one to train on, one whose contrast set is held out."
        )
    others = [original for original in originals if original.key not in flips]
    splits = [
        _draw_split(seed, augmentable, others, counterfactuals_of, config.test_fraction)
        for seed in config.seeds
    ]
    n, m = _resolve_sizes(config, splits)
    context_of = {original.key: original.context for original in originals}
    uses_context = _contexts(originals) is not None
    results = [_run_split(split, n, m, context_of, uses_context) for split in splits]
    return AugmentationReport(
        n=n,
        m=m,
        test_fraction=config.test_fraction,
        seeds=tuple(config.seeds),
        comp_original_accuracy=_mean_std([r.comp_original_accuracy for r in results]),
        comp_contrast_accuracy=_mean_std([r.comp_contrast_accuracy for r in results]),
        aug_original_accuracy=_mean_std([r.aug_original_accuracy for r in results]),
        aug_contrast_accuracy=_mean_std([r.aug_contrast_accuracy for r in results]),
        splits=results,
    )
