"""Model-in-the-loop priority: prefer what the model gets wrong or is unsure of (Polyjuice §4.4).

Polyjuice found random augmentation unhelpful for NLI and QQP and instead spent
labels where models fail. Here "the model" is either the researcher's own, whose
predictions are uploaded (`predictions_from_rows`), or a cheap TF-IDF baseline
scored out of fold (`BaselineClassifier.out_of_fold_probabilities`).
"""

import functools
import math
import re
import warnings
from collections.abc import Mapping, Sequence

import numpy as np
from sklearn.compose import ColumnTransformer
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer

# Rows of uploaded probabilities may be rounded (e.g. to 3 decimals) before upload.
PROBABILITY_SUM_TOLERANCE = 1e-2


def _check_probabilities(probabilities: np.ndarray) -> np.ndarray:
    probabilities = np.asarray(probabilities, dtype=float)
    if probabilities.ndim != 2 or probabilities.shape[1] == 0:
        raise ValueError(f"Expected an (examples, labels) array, got shape {probabilities.shape}.")
    if not np.all(np.isfinite(probabilities)) or np.any(probabilities < 0):
        raise ValueError("Probabilities must be finite and non-negative.")
    if not np.allclose(probabilities.sum(axis=1), 1.0, atol=PROBABILITY_SUM_TOLERANCE):
        raise ValueError("Each row of probabilities must sum to 1.")
    return probabilities


def uncertainty(probabilities: np.ndarray) -> np.ndarray:
    """Normalized entropy per row, in [0, 1]: 0 for a one-hot row, 1 for a uniform one.

    probabilities: (n, k) rows summing to 1 -> (n,). Dividing by log(k) makes rows
    comparable across tasks with two or three labels; with k == 1 nothing is uncertain.
    """
    probabilities = _check_probabilities(probabilities)
    k = probabilities.shape[1]
    if k == 1:
        return np.zeros(len(probabilities))
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(probabilities > 0, probabilities * np.log(probabilities), 0.0)
    return np.clip(-terms.sum(axis=1) / math.log(k), 0.0, 1.0)


def priority_scores(
    labels: Sequence[str], predicted_probabilities: np.ndarray, label_order: Sequence[str]
) -> np.ndarray:
    """score = (wrong + uncertainty) / 2, in [0, 1]; higher means label or perturb it first.

    wrong is 1 unless the gold label's probability is strictly above every other
    label's (a tie counts as wrong: the model did not commit to the gold label).
    A right prediction therefore has a unique maximum, uncertainty < 1 and a score
    below 0.5, while a wrong one scores at least 0.5: wrong ranks above right, and
    within each group the less certain ranks first.
    """
    probabilities = _check_probabilities(predicted_probabilities)
    label_order = list(label_order)
    if len(set(label_order)) != len(label_order):
        raise ValueError(f"label_order has duplicates: {label_order}.")
    if probabilities.shape != (len(labels), len(label_order)):
        raise ValueError(
            f"Expected probabilities of shape ({len(labels)}, {len(label_order)}) for "
            f"{len(labels)} labels over {label_order}, got {probabilities.shape}."
        )
    unknown = sorted(set(labels) - set(label_order))
    if unknown:
        raise ValueError(f"Unknown label(s) {unknown}; expected one of {label_order}.")
    gold = np.array([label_order.index(label) for label in labels], dtype=int)
    rows = np.arange(len(labels))
    gold_probability = probabilities[rows, gold]
    others = probabilities.copy()
    others[rows, gold] = -np.inf
    best_other = others.max(axis=1) if len(label_order) > 1 else np.full(len(labels), -np.inf)
    wrong = (gold_probability <= best_other).astype(float)
    return (wrong + uncertainty(probabilities)) / 2


def predictions_from_rows(
    rows: Sequence[Mapping], label_order: Sequence[str], known_ids: Sequence[str] | None = None
) -> dict[str, np.ndarray]:
    """Uploaded predictions -> {id: probabilities in label_order}.

    Each row is {"id", "label"} (counted as certain) or {"id", "probabilities": {label: p}}
    (labels left out count as 0); when a row has both, the probabilities win.
    """
    label_order = list(label_order)
    known = None if known_ids is None else {str(key) for key in known_ids}
    predictions: dict[str, np.ndarray] = {}
    for number, row in enumerate(rows, start=1):
        where = f"Prediction row {number}"
        if not isinstance(row, Mapping):
            raise ValueError(f"{where} is not an object with an id and a label or probabilities.")
        if row.get("id") in (None, ""):
            raise ValueError(f"{where} has no id.")
        key = str(row["id"])
        if known is not None and key not in known:
            raise ValueError(f"{where}: unknown id {key!r}.")
        if key in predictions:
            raise ValueError(f"{where}: id {key!r} appears twice.")
        predictions[key] = _row_probabilities(row, label_order, where)
    return predictions


def _row_probabilities(row: Mapping, label_order: list[str], where: str) -> np.ndarray:
    given = row.get("probabilities")
    label = row.get("label")
    if given is None and label is None:
        raise ValueError(f"{where} needs a label or probabilities.")
    if label is not None and str(label) not in label_order:
        raise ValueError(f"{where}: unknown label {label!r}; expected one of {label_order}.")
    vector = np.zeros(len(label_order))
    if given is None:
        vector[label_order.index(str(label))] = 1.0
        return vector
    if not isinstance(given, Mapping) or not given:
        raise ValueError(f"{where}: probabilities must map each label to a number.")
    for name, value in given.items():
        if str(name) not in label_order:
            raise ValueError(f"{where}: unknown label {name!r}; expected one of {label_order}.")
        try:
            vector[label_order.index(str(name))] = float(value)
        except (TypeError, ValueError):
            raise ValueError(f"{where}: probability of {name!r} is not a number.") from None
    if not np.all(np.isfinite(vector)) or np.any(vector < 0):
        raise ValueError(f"{where}: probabilities must be finite and non-negative.")
    total = vector.sum()
    if abs(total - 1.0) > PROBABILITY_SUM_TOLERANCE:
        raise ValueError(f"{where}: probabilities sum to {total:.3f}, not 1.")
    return vector / total  # undo the rounding so that rows sum to exactly 1


@functools.cache
def _vader():
    from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

    return SentimentIntensityAnalyzer()


@functools.lru_cache(maxsize=100_000)
def _compound(text: str) -> float:
    # Cached: out-of-fold fitting scores the same texts once per fold.
    return _vader().polarity_scores(text)["compound"]


def sentiment_lexicon_scores(texts) -> np.ndarray:
    """(n, 1): each text's VADER compound score in [-1, 1] (negation and intensifiers
    included: "not great" scores below zero), a feature that needs no training data."""
    return np.array([[_compound(str(text))] for text in texts])


# Words that negate, for the pair features: a negation on one side only often says
# "contradiction" (or "not a duplicate").
_PAIR_NEGATIONS = frozenset({"no", "not", "never", "nobody", "nothing", "none", "nor", "without"})
_PAIR_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


def _pair_words(text: str) -> list[str]:
    words = _PAIR_WORD.findall(str(text).lower())
    return ["not" if word.endswith("n't") else word for word in words]


def pair_features(rows) -> np.ndarray:
    """(n, 5) for (context, text) rows: the share of the text's words the context has, the
    share it does not, a negation in the text only, in the context only, and the text's
    length against the context's (capped at 2). What n-grams of each side alone cannot
    see: on the first 1,000 CAD NLI train originals, out of fold, they lift the baseline
    from 478 to 550 right (the most common label: 340) and give 0.48 of the
    human-revised hypotheses their new label, against 0.35 (chance: 0.33;
    `bench/pair_features.py`, docs/benchmarks.md)."""
    features = []
    for context, text in rows:
        seen, words = set(_pair_words(context)), _pair_words(text)
        distinct = set(words) or {""}
        shared = len(distinct & seen) / len(distinct)
        features.append(
            [
                shared,
                1.0 - shared,
                float(bool(distinct & _PAIR_NEGATIONS) and not seen & _PAIR_NEGATIONS),
                float(bool(seen & _PAIR_NEGATIONS) and not distinct & _PAIR_NEGATIONS),
                min(len(words) / max(1, len(_pair_words(context))), 2.0),
            ]
        )
    return np.array(features, dtype=float).reshape(len(features), 5)


class BaselineClassifier:
    """TF-IDF word n-grams (+ optional char n-grams) and logistic regression over x (and context).

    For pair tasks (NLI, QQP) the context and the text get separate vocabularies, so
    "dog" in the premise and "dog" in the hypothesis are different features, and
    `pair_features` (word overlap, one-sided negation, length) relate the two.

    `sentiment_lexicon` adds the text's VADER compound score as one more feature. Fitted
    on a few dozen texts, n-grams mostly learn the words a counterfactual shares with its
    original, so they give an edit x's label back; the lexicon already knows that
    "terrible" and "not good" are negative, and the regression learns which way it points
    for the campaign's labels. On first sentences of CAD sentiment dev reviews, fitted on
    40 train originals, it told 0.67 of the human revisions' new labels against 0.50
    (docs/benchmarks.md, `bench/flip_classifier.py`). For sentiment tasks only.
    """

    def __init__(
        self,
        *,
        char_ngrams: bool = False,
        sentiment_lexicon: bool = False,
        pair: bool = True,
        c: float = 1.0,
        seed: int = 0,
    ) -> None:
        self.char_ngrams = char_ngrams
        self.sentiment_lexicon = sentiment_lexicon
        self.pair = pair  # `pair_features` for pair tasks (off only to measure them)
        self.c = c
        self.seed = seed
        self.classes_: np.ndarray | None = None
        self._pipeline: Pipeline | None = None
        self._uses_context = False

    def _make_pipeline(self, uses_context: bool) -> Pipeline:
        # Column 0 is the context, column 1 the text; a scalar column hands each
        # vectorizer a 1-d array of strings.
        words = {"ngram_range": (1, 2), "sublinear_tf": True, "token_pattern": r"(?u)\b\w+\b"}
        features = [("text_words", TfidfVectorizer(**words), 1)]
        if self.char_ngrams:
            features.append(
                ("text_chars", TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 5)), 1)
            )
        if self.sentiment_lexicon:
            features.append(("text_sentiment", FunctionTransformer(sentiment_lexicon_scores), 1))
        if uses_context:
            features.append(("context_words", TfidfVectorizer(**words), 0))
            if self.pair:
                features.append(("pair", FunctionTransformer(pair_features), [0, 1]))
        return Pipeline(
            [
                ("features", ColumnTransformer(features)),
                # Balanced weights: a minority label should not look "easy" by default.
                (
                    "model",
                    LogisticRegression(
                        C=self.c, class_weight="balanced", max_iter=1000, random_state=self.seed
                    ),
                ),
            ]
        )

    @staticmethod
    def _columns(texts: Sequence[str], contexts: Sequence[str] | None) -> np.ndarray:
        if contexts is not None and len(contexts) != len(texts):
            raise ValueError(f"Got {len(texts)} texts but {len(contexts)} contexts.")
        rows = [(contexts[i] if contexts is not None else "", text) for i, text in enumerate(texts)]
        return np.array(rows, dtype=object).reshape(len(texts), 2)

    @staticmethod
    def _check_labels(texts: Sequence[str], labels: Sequence[str]) -> np.ndarray:
        if len(texts) != len(labels):
            raise ValueError(f"Got {len(texts)} texts but {len(labels)} labels.")
        y = np.asarray([str(label) for label in labels], dtype=object)
        if len(set(y)) < 2:
            raise ValueError(
                "The baseline needs examples of at least two labels to learn anything; "
                f"got only {sorted(set(y))}."
            )
        return y

    def fit(
        self, texts: Sequence[str], labels: Sequence[str], contexts: Sequence[str] | None = None
    ) -> "BaselineClassifier":
        y = self._check_labels(texts, labels)
        self._uses_context = contexts is not None and any(contexts)
        self._pipeline = self._make_pipeline(self._uses_context)
        self._pipeline.fit(self._columns(texts, contexts), y)
        self.classes_ = self._pipeline.classes_
        return self

    def predict_proba(
        self, texts: Sequence[str], contexts: Sequence[str] | None = None
    ) -> np.ndarray:
        """(n, len(classes_)) probabilities, columns in `classes_` order."""
        if self._pipeline is None:
            raise RuntimeError("Fit the baseline classifier before asking for probabilities.")
        if self._uses_context and contexts is None:
            raise ValueError("This classifier was fitted on contexts; pass them to predict too.")
        return self._pipeline.predict_proba(self._columns(texts, contexts))

    def out_of_fold_probabilities(
        self,
        texts: Sequence[str],
        labels: Sequence[str],
        contexts: Sequence[str] | None = None,
        folds: int = 5,
    ) -> np.ndarray:
        """(n, k) probabilities for the training examples, each from a model that never saw it.

        Scoring the training set with a model fitted on it would make every original
        look easy. Folds shrink to the size of the rarest label (at least 2); a label
        missing from a fold's training part gets probability 0 there. Columns follow
        sorted labels, which is also `classes_` afterwards.
        """
        y = self._check_labels(texts, labels)
        if len(y) < 2:
            raise ValueError("Out-of-fold probabilities need at least two examples.")
        self.classes_ = np.array(sorted(set(y)), dtype=object)
        _, counts = np.unique(y, return_counts=True)
        n_splits = min(len(y), max(2, min(folds, int(counts.min()))))
        uses_context = contexts is not None and any(contexts)
        X = self._columns(texts, contexts)
        probabilities = np.zeros((len(y), len(self.classes_)))
        column_of = {label: column for column, label in enumerate(self.classes_)}
        splitter = StratifiedKFold(n_splits=n_splits, shuffle=True, random_state=self.seed)
        with warnings.catch_warnings():
            # A label seen once cannot be in every fold; the zero column covers that.
            warnings.filterwarnings(
                "ignore", message="The least populated class", category=UserWarning
            )
            splits = list(splitter.split(X, y))
        for train, held_out in splits:
            if len(set(y[train])) < 2:
                # Nothing to learn from one label: the fold's prior is all it knows.
                probabilities[held_out, column_of[y[train][0]]] = 1.0
                continue
            pipeline = self._make_pipeline(uses_context).fit(X[train], y[train])
            columns = [column_of[label] for label in pipeline.classes_]
            probabilities[np.ix_(held_out, columns)] = pipeline.predict_proba(X[held_out])
        return probabilities
