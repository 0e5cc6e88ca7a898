"""The classifier in the loop: each candidate's predicted label and confidence (issue #21, 3).

Three sources, one shape (`LabelPrediction`): the built-in scikit-learn baseline
trained on a campaign's labeled texts, its originals and its counterfactuals whose label
is known (`BaselineLabelClassifier`, over
`generation.priority.BaselineClassifier`), a text-classification model directory the
researcher names (`ModelDirectoryClassifier`, transformers, local files only), and
the researcher's own predictions uploaded for the candidates (`uploaded_predictions`).
`flip_scores` turns predictions into the chance that each candidate reached the label
it should, which selection weighs against diversity (selection.md §2).
"""

from __future__ import annotations

import collections
import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from generation.priority import BaselineClassifier

BASELINE, MODEL, UPLOADED = "baseline", "model", "uploaded"
SOURCES = (BASELINE, MODEL, UPLOADED)


@dataclass(frozen=True)
class LabelPrediction:
    """A classifier's label for one text, its probability, and every label's (if known)."""

    label: str
    confidence: float  # the probability of `label`, in [0, 1]
    probabilities: Mapping[str, float] = field(default_factory=dict)

    def probability(self, label: str) -> float:
        """P(label): from the full distribution where given, else what `confidence` implies
        (the rest shared evenly is unknown, so another label gets 1 - confidence at most)."""
        if self.probabilities:
            return float(self.probabilities.get(label, 0.0))
        return self.confidence if label == self.label else 1.0 - self.confidence


def _from_rows(probabilities: np.ndarray, classes: Sequence[str]) -> list[LabelPrediction]:
    """(n, k) probabilities over `classes` -> one prediction per row."""
    predictions = []
    for row in probabilities:
        best = int(np.argmax(row))
        predictions.append(
            LabelPrediction(
                label=str(classes[best]),
                confidence=float(row[best]),
                probabilities={str(c): float(p) for c, p in zip(classes, row, strict=True)},
            )
        )
    return predictions


# Labeled counterfactuals it takes before the lexicon feature must earn its place.
LEXICON_CHECK_MIN_COUNTERFACTUALS = 20
LEXICON_CHECK_FOLDS = 5


class BaselineLabelClassifier:
    """TF-IDF + logistic regression fitted on labeled texts (a campaign's originals and its
    labeled counterfactuals); for sentiment, a lexicon score as one more feature.

    The lexicon is what tells a flip before any counterfactual is labeled: fitted on
    originals alone, n-grams give an edit its original's label back (chance on CAD's
    human revisions), the lexicon does not (0.67-0.79). Once many counterfactuals are
    labeled, n-grams learn the flips themselves, and the lexicon feature can cost
    accuracy (0.84 → 0.80 on unseen review revisions with 200 pairs; docs/benchmarks.md).
    So with `sentiment_lexicon` and at least LEXICON_CHECK_MIN_COUNTERFACTUALS labeled
    counterfactuals among the texts, both are scored on those counterfactuals, each by a
    model fitted without its group (its original and the original's counterfactuals, as
    candidates are predicted: `predict_out_of_fold`), and the lexicon is kept unless
    leaving it out is more accurate. `uses_lexicon` says which was fitted.
    """

    source = BASELINE

    def __init__(self, seed: int = 0, *, sentiment_lexicon: bool = False) -> None:
        self.seed = seed
        self.sentiment_lexicon = sentiment_lexicon
        self.uses_lexicon = sentiment_lexicon
        self.model = BaselineClassifier(seed=seed, sentiment_lexicon=sentiment_lexicon)

    def fit(
        self,
        texts: Sequence[str],
        labels: Sequence[str],
        contexts: Sequence[str] | None = None,
        *,
        counterfactual: Sequence[bool] | None = None,
        groups: Sequence[str] | None = None,
    ) -> BaselineLabelClassifier:
        """ValueError with fewer than two labels among the examples (nothing to learn).

        `counterfactual` marks the texts that are labeled counterfactuals (not originals),
        `groups` the original each text is or belongs to; the lexicon is checked only
        with both.
        """
        self.uses_lexicon = self.sentiment_lexicon and self._lexicon_helps(
            texts, labels, contexts, counterfactual, groups
        )
        self.model = BaselineClassifier(seed=self.seed, sentiment_lexicon=self.uses_lexicon)
        self.model.fit(texts, labels, contexts)
        return self

    def _lexicon_helps(self, texts, labels, contexts, counterfactual, groups) -> bool:
        if (
            counterfactual is None
            or groups is None
            or sum(counterfactual) < LEXICON_CHECK_MIN_COUNTERFACTUALS
        ):
            return True
        order = sorted(set(groups))
        part_of = {group: index % LEXICON_CHECK_FOLDS for index, group in enumerate(order)}
        parts = np.array([part_of[group] for group in groups])
        asked = np.asarray(counterfactual, dtype=bool)
        truth = np.asarray([str(label) for label in labels], dtype=object)
        right = {True: 0, False: 0}
        for part in range(LEXICON_CHECK_FOLDS):
            held = np.flatnonzero((parts == part) & asked)
            rest = np.flatnonzero(parts != part)
            if not len(held) or len(set(truth[rest])) < 2:
                continue
            for lexicon in (True, False):
                model = BaselineClassifier(seed=self.seed, sentiment_lexicon=lexicon).fit(
                    [texts[i] for i in rest],
                    truth[rest],
                    [contexts[i] for i in rest] if contexts is not None else None,
                )
                probabilities = model.predict_proba(
                    [texts[i] for i in held],
                    [contexts[i] for i in held] if contexts is not None else None,
                )
                predicted = model.classes_[np.argmax(probabilities, axis=1)]
                right[lexicon] += int(np.sum(predicted == truth[held]))
        return right[True] >= right[False]

    def predict(
        self, texts: Sequence[str], contexts: Sequence[str] | None = None
    ) -> list[LabelPrediction]:
        if not texts:
            return []
        uses_context = self.model._uses_context  # fitted on pairs: pass the contexts too
        probabilities = self.model.predict_proba(texts, contexts if uses_context else None)
        return _from_rows(probabilities, list(self.model.classes_))


@dataclass(frozen=True)
class LabeledText:
    """One text the built-in baseline learns from."""

    text: str
    label: str
    context: str = ""  # the fixed side of a pair task ("" for single texts)
    group: str = ""  # the original it is, or is a counterfactual of
    counterfactual: bool = False  # a labeled counterfactual rather than an original


def fit_baseline(
    rows: Sequence[LabeledText],
    *,
    pair_task: bool,
    sentiment_lexicon: bool,
    seed: int = 0,
    check_lexicon: bool = True,
) -> BaselineLabelClassifier:
    """The baseline fitted on `rows` (ValueError with fewer than two labels among them);
    without `check_lexicon`, the lexicon is used as `sentiment_lexicon` says, unchecked."""
    return BaselineLabelClassifier(seed=seed, sentiment_lexicon=sentiment_lexicon).fit(
        [row.text for row in rows],
        [row.label for row in rows],
        [row.context for row in rows] if pair_task else None,
        counterfactual=[row.counterfactual for row in rows] if check_lexicon else None,
        groups=[row.group for row in rows],
    )


def predict_out_of_fold(
    rows: Sequence[LabeledText],
    texts: Sequence[str],
    contexts: Sequence[str] | None,
    groups: Sequence[str],
    *,
    sentiment_lexicon: bool,
    folds: int = 5,
    seed: int = 0,
) -> list[LabelPrediction | None]:
    """The baseline's prediction for each text, from a model that never saw its group.

    A candidate is an edit of an original the campaign's baseline learned from, and a
    text classifier fitted on x gives x's label back to a near-copy of x: on CAD
    sentiment, TF-IDF + logistic regression fitted on 200 train reviews (36 with their
    human revision) gave the other 164 revisions their new label 0.001 of the time;
    out of fold by original, with the sentiment lexicon, 0.80 (`bench/flip_classifier.py`,
    "campaign"; docs/benchmarks.md). So the groups (originals) of `rows` are dealt into
    `folds` parts, and a text is predicted by the baseline fitted on the rows of the
    other parts. A part whose other rows hold fewer than two labels, and a text whose
    group no row has, get the baseline fitted on every row; None where not even those
    hold two labels.

    The models depend on `rows` alone, not on `texts`, so they are kept for the next
    call with the same rows (the next generation chunk of a campaign whose labels did
    not change); `fold_models_clear` forgets them.
    """
    rows = tuple(rows)
    pair_task = contexts is not None
    if len({row.label for row in rows}) < 2:
        return [None] * len(texts)
    # Whether the lexicon earns its place is decided once, on every row.
    lexicon = sentiment_lexicon and _fold_model(rows, None, 1, pair_task, True, seed).uses_lexicon
    part_of, parts = _parts(rows, folds)
    by_part: dict[int | None, list[int]] = {}
    for index, group in enumerate(groups):
        by_part.setdefault(part_of.get(group), []).append(index)
    predictions: list[LabelPrediction | None] = [None] * len(texts)
    for part, targets in by_part.items():
        classifier = _fold_model(rows, part, parts, pair_task, lexicon, seed)
        found = classifier.predict(
            [texts[i] for i in targets], [contexts[i] for i in targets] if pair_task else None
        )
        for i, prediction in zip(targets, found, strict=True):
            predictions[i] = prediction
    return predictions


@dataclass(frozen=True)
class BaselineCheck:
    """How well the baseline labels originals it never saw: `right` of `of` originals,
    each predicted by the fold model fitted without its group, next to `majority`, how
    many the campaign's most common label alone gets right. A baseline no better than
    the majority label says little about which candidates flip theirs."""

    right: int
    of: int
    majority: int

    @property
    def accuracy(self) -> float:
        return self.right / self.of if self.of else 0.0

    @property
    def better_than_majority(self) -> bool:
        return self.right > self.majority


def check_out_of_fold(
    rows: Sequence[LabeledText],
    *,
    pair_task: bool,
    sentiment_lexicon: bool,
    folds: int = 5,
    seed: int = 0,
) -> BaselineCheck | None:
    """The baseline's out-of-fold accuracy on the originals among `rows`, with the fold
    models `predict_out_of_fold` uses (cached: after it, this costs one prediction per
    part). A part whose other rows hold one label is left out of the count, since the
    fallback model saw it. None with fewer than two labels or two groups."""
    rows = tuple(rows)
    if len({row.label for row in rows}) < 2:
        return None
    lexicon = sentiment_lexicon and _fold_model(rows, None, 1, pair_task, True, seed).uses_lexicon
    part_of, parts = _parts(rows, folds)
    if parts < 2:
        return None
    right = of = 0
    labels: collections.Counter[str] = collections.Counter()
    for part in range(parts):
        rest = {row.label for row in rows if part_of[row.group] != part}
        held = [row for row in rows if part_of[row.group] == part and not row.counterfactual]
        if len(rest) < 2 or not held:
            continue
        classifier = _fold_model(rows, part, parts, pair_task, lexicon, seed)
        found = classifier.predict(
            [row.text for row in held], [row.context for row in held] if pair_task else None
        )
        right += sum(
            prediction.label == row.label for prediction, row in zip(found, held, strict=True)
        )
        of += len(held)
        labels.update(row.label for row in held)
    if not of:
        return None
    return BaselineCheck(right=right, of=of, majority=labels.most_common(1)[0][1])


@functools.lru_cache(maxsize=4)
def _parts(rows: tuple[LabeledText, ...], folds: int) -> tuple[dict[str, int], int]:
    """Each group's part, and how many parts: groups in sorted order, dealt round."""
    order = sorted({row.group for row in rows})
    parts = max(1, min(folds, len(order)))
    return {group: index % parts for index, group in enumerate(order)}, parts


@functools.lru_cache(maxsize=8)
def _fold_model(
    rows: tuple[LabeledText, ...],
    part: int | None,
    parts: int,
    pair_task: bool,
    lexicon: bool,
    seed: int,
) -> BaselineLabelClassifier:
    """The baseline fitted without the groups of `part` (every row for None, or where
    the rest hold one label). Fitted on every row with `lexicon`, it checks the lexicon."""
    training = rows
    if part is not None:
        part_of, _ = _parts(rows, parts)
        rest = tuple(row for row in rows if part_of[row.group] != part)
        if len({row.label for row in rest}) >= 2:
            training = rest
    return fit_baseline(
        training,
        pair_task=pair_task,
        sentiment_lexicon=lexicon,
        seed=seed,
        check_lexicon=part is None,
    )


def fold_models_clear() -> None:
    """Forget the models `predict_out_of_fold` keeps."""
    _fold_model.cache_clear()
    _parts.cache_clear()


class ModelDirectoryClassifier:
    """A transformers text-classification model from a local directory.

    Its `config.id2label` names must be the campaign's label values, or be mapped to them
    with `label_map` (e.g. {"LABEL_0": "negative", "POSITIVE": "positive"}, case-blind).
    Pair tasks are encoded as (context, text), as NLI models are trained.
    """

    source = MODEL

    def __init__(
        self,
        path: str | Path,
        *,
        labels: Sequence[str] = (),
        label_map: Mapping[str, str] | None = None,
        device: str = "cpu",
        batch_size: int = 32,
        max_length: int = 256,
    ) -> None:
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        directory = Path(path).expanduser()
        if not directory.is_dir():
            raise ValueError(f"No model directory at {directory}.")
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(directory, local_files_only=True)
            self.model = AutoModelForSequenceClassification.from_pretrained(
                directory, local_files_only=True
            )
        except (OSError, ValueError) as error:
            raise ValueError(
                f"{directory} is not a text-classification model directory: {error}"
            ) from None
        self.model.to(device).eval()
        self.device, self.batch_size, self.max_length = device, batch_size, max_length
        self.classes = self._classes(labels, label_map or {})

    def _classes(self, labels: Sequence[str], label_map: Mapping[str, str]) -> list[str]:
        mapping = {str(k).lower(): str(v) for k, v in label_map.items()}
        names = [self.model.config.id2label[index] for index in range(self.model.config.num_labels)]
        classes = [mapping.get(str(name).lower(), str(name).lower()) for name in names]
        unknown = [
            name for name, cls in zip(names, classes, strict=True) if labels and cls not in labels
        ]
        if unknown:
            raise ValueError(
                f"The model's labels {', '.join(map(str, unknown))} are not labels of the task "
                f"({', '.join(labels)}); give a label_map."
            )
        return classes

    def predict(
        self, texts: Sequence[str], contexts: Sequence[str] | None = None
    ) -> list[LabelPrediction]:
        import torch

        rows = []
        with torch.no_grad():
            for start in range(0, len(texts), self.batch_size):
                batch = list(texts[start : start + self.batch_size])
                pairs = list(contexts[start : start + self.batch_size]) if contexts else None
                encoded = self.tokenizer(
                    *((pairs, batch) if pairs and any(pairs) else (batch,)),
                    padding=True,
                    truncation=True,
                    max_length=self.max_length,
                    return_tensors="pt",
                ).to(self.device)
                logits = self.model(**encoded).logits  # (batch, labels)
                rows.append(torch.softmax(logits.float(), dim=-1).cpu().numpy())
        if not rows:
            return []
        return _from_rows(np.concatenate(rows), self.classes)


def uploaded_predictions(
    rows: Sequence[Mapping],
    labels: Sequence[str],
    known_ids: Sequence[str],
    wheres: Sequence[str] | None = None,
) -> tuple[dict[str, LabelPrediction], dict[str, list[str]]]:
    """A researcher's predictions for candidates: ({id: prediction}, {row: problems}).

    Each row has `id` (a candidate id), `label` (one of `labels`, case-blind) and
    optionally `confidence` (in [0, 1]; default 1). Every bad row is reported, under its
    `wheres` entry (default "row N", counting rows from 1), so a whole file can be fixed
    at once.
    """
    wheres = wheres or [f"row {number}" for number in range(1, len(rows) + 1)]
    by_name = {str(label).lower(): str(label) for label in labels}
    known = {str(key) for key in known_ids}
    predictions: dict[str, LabelPrediction] = {}
    errors: dict[str, list[str]] = {}
    seen: dict[str, str] = {}
    for where, row in zip(wheres, rows, strict=True):
        problems = []
        key = str(row.get("id", "") or "").strip()
        name = str(row.get("label", "") or "").strip()
        confidence = _confidence(row.get("confidence"), problems)
        if not key:
            problems.append("id: Missing; give a candidate id.")
        elif key not in known:
            problems.append(f"id: No candidate {key!r} in this campaign.")
        elif key in seen:
            problems.append(f"id: {key!r} is also in {seen[key]}.")
        if not name:
            problems.append("label: Missing.")
        elif name.lower() not in by_name:
            problems.append(f"label: Unknown label {name!r}; expected one of {', '.join(labels)}.")
        if problems:
            errors[where] = problems
            continue
        seen[key] = where
        predictions[key] = LabelPrediction(by_name[name.lower()], confidence)
    return predictions, errors


def _confidence(value, problems: list[str]) -> float:
    if value is None or (isinstance(value, str) and not value.strip()):
        return 1.0
    try:
        number = float(value)
    except (TypeError, ValueError):
        problems.append(f"confidence: {value!r} is not a number.")
        return 1.0
    if not math.isfinite(number) or not 0.0 <= number <= 1.0:
        problems.append(f"confidence: {value!r} is not between 0 and 1.")
    return number


def flip_scores(
    predictions: Sequence[LabelPrediction | None],
    original_labels: Sequence[str],
    intended_labels: Sequence[str | None] | None = None,
) -> list[float]:
    """Each candidate's predicted chance of a flip, in [0, 1]: P(intended label) where the
    candidate aimed at one, else 1 - P(x's label); 0 without a prediction."""
    intended = intended_labels or [None] * len(predictions)
    scores = []
    for prediction, label, aim in zip(predictions, original_labels, intended, strict=True):
        if prediction is None:
            scores.append(0.0)
        elif aim:
            scores.append(min(1.0, max(0.0, prediction.probability(aim))))
        else:
            scores.append(min(1.0, max(0.0, 1.0 - prediction.probability(label))))
    return scores
