import numpy as np
import pytest

from generation.priority import (
    BaselineClassifier,
    pair_features,
    predictions_from_rows,
    priority_scores,
    uncertainty,
)
from tests.generation.pair_scenes import SCENES, UNRELATED

LABELS = ["negative", "positive"]

POSITIVE = [
    "a wonderful delightful film",
    "great acting and a wonderful story",
    "i loved it , truly great",
    "delightful and moving , loved it",
    "a great , wonderful experience",
    "loved the delightful music",
]
NEGATIVE = [
    "a terrible boring film",
    "awful acting and a boring story",
    "i hated it , truly awful",
    "boring and dull , hated it",
    "an awful , terrible experience",
    "hated the dull music",
]


def test_uncertainty_is_normalized_entropy():
    values = uncertainty(np.array([[1.0, 0.0], [0.5, 0.5], [0.9, 0.1]]))
    assert values.shape == (3,)
    assert values[0] == pytest.approx(0.0)
    assert values[1] == pytest.approx(1.0)
    assert 0 < values[2] < 1
    assert uncertainty(np.full((1, 3), 1 / 3)) == pytest.approx([1.0])
    assert uncertainty(np.ones((2, 1))) == pytest.approx([0.0, 0.0])


@pytest.mark.parametrize(
    "bad",
    [
        np.array([0.5, 0.5]),
        np.array([[0.5, 0.6]]),
        np.array([[-0.1, 1.1]]),
        np.array([[np.nan, 1]]),
    ],
)
def test_uncertainty_rejects_what_is_not_a_probability_table(bad):
    with pytest.raises(ValueError):
        uncertainty(bad)


def test_wrong_predictions_rank_above_right_ones_then_by_uncertainty():
    probabilities = np.array(
        [
            [0.99, 0.01],  # right, sure
            [0.6, 0.4],  # right, unsure
            [0.45, 0.55],  # wrong, unsure
            [0.01, 0.99],  # wrong, sure
            [0.5, 0.5],  # a tie counts as wrong
        ]
    )
    gold = ["negative"] * 5
    scores = priority_scores(gold, probabilities, LABELS)
    assert scores.shape == (5,)
    assert np.all((scores >= 0) & (scores <= 1))
    assert list(np.argsort(-scores)) == [4, 2, 3, 1, 0]
    assert scores[:2].max() < 0.5 <= scores[2:].min()
    expected = (np.array([0, 0, 1, 1, 1]) + uncertainty(probabilities)) / 2
    assert scores == pytest.approx(expected)


def test_priority_scores_follow_label_order():
    probabilities = np.array([[0.9, 0.1]])
    assert priority_scores(["positive"], probabilities, ["positive", "negative"])[0] < 0.5
    assert priority_scores(["positive"], probabilities, LABELS)[0] >= 0.5


def test_priority_scores_reject_bad_inputs():
    probabilities = np.array([[0.9, 0.1]])
    with pytest.raises(ValueError, match="shape"):
        priority_scores(["negative", "positive"], probabilities, LABELS)
    with pytest.raises(ValueError, match="shape"):
        priority_scores(["negative"], probabilities, ["negative", "positive", "neutral"])
    with pytest.raises(ValueError, match="Unknown label"):
        priority_scores(["neutral"], probabilities, LABELS)
    with pytest.raises(ValueError, match="duplicates"):
        priority_scores(["negative"], probabilities, ["negative", "negative"])


def test_baseline_learns_a_separable_sentiment_set():
    texts, labels = POSITIVE + NEGATIVE, ["positive"] * 6 + ["negative"] * 6
    classifier = BaselineClassifier(char_ngrams=True).fit(texts, labels)
    assert list(classifier.classes_) == LABELS
    held_out = ["wonderful , i loved it", "boring , i hated it", "a great delightful story"]
    probabilities = classifier.predict_proba(held_out)
    assert probabilities.shape == (3, 2)
    predicted = [classifier.classes_[i] for i in probabilities.argmax(axis=1)]
    assert predicted == ["positive", "negative", "positive"]


def test_baseline_uses_the_context_of_pair_tasks():
    contexts = ["the cat sleeps", "the dog runs"] * 4
    texts = ["it is asleep", "it is asleep", "it moves", "it moves"] * 2
    labels = ["yes", "no", "no", "yes"] * 2
    classifier = BaselineClassifier().fit(texts, labels, contexts=contexts)
    assert classifier.predict_proba(["it is asleep"], contexts=["the cat sleeps"]).shape == (1, 2)
    with pytest.raises(ValueError, match="contexts"):
        classifier.predict_proba(["it is asleep"])


def test_pair_features_relate_the_text_to_its_context():
    features = pair_features(
        [
            ("A man plays a guitar.", "A man plays a guitar."),
            ("A man plays a guitar.", "Nobody plays anything."),
            ("The dog isn't asleep.", "The dog sleeps on a very long sofa today."),
            ("", "Words with no context."),
        ]
    )
    assert features.shape == (4, 5)
    copy, negated, negation_in_context, no_context = features
    assert copy.tolist() == [1.0, 0.0, 0.0, 0.0, 1.0]
    assert negated[0] == pytest.approx(1 / 3) and negated[2] == 1.0  # "nobody" negates
    assert negation_in_context[3] == 1.0 and negation_in_context[4] == 2.0  # "isn't"; capped
    assert no_context[:2].tolist() == [0.0, 1.0]
    assert pair_features([]).shape == (0, 5)


def test_pair_features_tell_what_ngrams_of_either_side_cannot():
    """Whether the hypothesis repeats the premise, on words never seen in training."""
    scenes = SCENES[:6]
    premises = [premise for premise, _ in scenes] * 2
    texts = [text for _, text in scenes] + [UNRELATED[i % 3] for i in range(len(scenes))]
    labels = ["entailment"] * len(scenes) + ["neutral"] * len(scenes)
    classifier = BaselineClassifier().fit(texts, labels, contexts=premises)
    probabilities = classifier.predict_proba(
        ["A pilot flies a plane.", "Waiters carry trays."],
        contexts=["A pilot flies a plane over Paris."] * 2,
    )
    predicted = classifier.classes_[np.argmax(probabilities, axis=1)]
    assert list(predicted) == ["entailment", "neutral"]


def test_out_of_fold_probabilities_shape_and_rows():
    texts, labels = POSITIVE + NEGATIVE, ["positive"] * 6 + ["negative"] * 6
    probabilities = BaselineClassifier().out_of_fold_probabilities(texts, labels, folds=3)
    assert probabilities.shape == (12, 2)
    assert probabilities.sum(axis=1) == pytest.approx(np.ones(12))
    assert priority_scores(labels, probabilities, LABELS).shape == (12,)


def test_out_of_fold_reduces_folds_on_tiny_data():
    # Two examples of one label, one of the other: at most 2 folds, and the lone
    # "negative" is scored by a model that never saw its label.
    texts, labels = ["good", "great", "bad"], ["positive", "positive", "negative"]
    classifier = BaselineClassifier()
    probabilities = classifier.out_of_fold_probabilities(texts, labels, folds=5)
    assert probabilities.shape == (3, 2)
    assert probabilities.sum(axis=1) == pytest.approx(np.ones(3))
    assert list(classifier.classes_) == LABELS
    assert probabilities[2, 0] == 0.0


def test_baseline_rejects_a_single_label_and_unfitted_use():
    with pytest.raises(ValueError, match="at least two labels"):
        BaselineClassifier().fit(["good", "great"], ["positive", "positive"])
    with pytest.raises(ValueError, match="at least two labels"):
        BaselineClassifier().out_of_fold_probabilities(["good", "great"], ["positive", "positive"])
    with pytest.raises(ValueError, match="labels"):
        BaselineClassifier().fit(["good", "bad"], ["positive"])
    with pytest.raises(RuntimeError, match="Fit"):
        BaselineClassifier().predict_proba(["good"])


def test_predictions_from_rows_reads_labels_and_probabilities():
    rows = [
        {"id": "a", "label": "positive"},
        {"id": 7, "probabilities": {"negative": 0.25, "positive": 0.75}},
        {"id": "c", "probabilities": {"negative": 0.333, "positive": 0.666}},  # rounded
        {"id": "d", "probabilities": {"positive": 1}},  # left-out labels count as 0
    ]
    predictions = predictions_from_rows(rows, LABELS, known_ids=["a", "7", "c", "d"])
    assert list(predictions) == ["a", "7", "c", "d"]
    assert predictions["a"] == pytest.approx([0, 1])
    assert predictions["7"] == pytest.approx([0.25, 0.75])
    assert predictions["c"].sum() == pytest.approx(1.0)
    assert predictions["d"] == pytest.approx([0, 1])


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ([{"label": "positive"}], "no id"),
        ([{"id": "zzz", "label": "positive"}], "unknown id 'zzz'"),
        ([{"id": "a"}], "needs a label or probabilities"),
        ([{"id": "a", "label": "neutral"}], "unknown label 'neutral'"),
        ([{"id": "a", "probabilities": {"neutral": 1.0}}], "unknown label 'neutral'"),
        ([{"id": "a", "probabilities": {"positive": 0.9}}], "sum to 0.900"),
        ([{"id": "a", "probabilities": {"positive": "high"}}], "not a number"),
        ([{"id": "a", "probabilities": {"positive": 2, "negative": -1}}], "non-negative"),
        ([{"id": "a", "probabilities": [0.5, 0.5]}], "map each label"),
        ([{"id": "a", "label": "positive"}, {"id": "a", "label": "negative"}], "twice"),
        (["a,positive"], "not an object"),
    ],
)
def test_predictions_from_rows_errors(rows, message):
    with pytest.raises(ValueError, match=message):
        predictions_from_rows(rows, LABELS, known_ids=["a", "b"])
