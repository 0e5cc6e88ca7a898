"""The classifier in the loop: baseline, model directory, uploaded predictions, flip scores."""

import math

import pytest

from generation import label_classifiers
from generation.label_classifiers import (
    LEXICON_CHECK_MIN_COUNTERFACTUALS,
    BaselineLabelClassifier,
    LabeledText,
    LabelPrediction,
    ModelDirectoryClassifier,
    check_out_of_fold,
    flip_scores,
    predict_out_of_fold,
    uploaded_predictions,
)
from tests.generation.tiny_models import build_tiny_classifier

POSITIVE = ["a great film", "a wonderful great story", "great acting", "wonderful music"]
NEGATIVE = ["a terrible film", "a dull terrible story", "terrible acting", "dull music"]


def test_the_baseline_learns_the_originals_and_gives_every_labels_probability():
    classifier = BaselineLabelClassifier().fit(
        POSITIVE + NEGATIVE, ["positive"] * 4 + ["negative"] * 4
    )
    great, terrible = classifier.predict(["a great great film", "a terrible dull film"])
    assert (great.label, terrible.label) == ("positive", "negative")
    assert 0.5 < great.confidence <= 1.0
    assert math.isclose(sum(great.probabilities.values()), 1.0)
    assert great.probability("negative") == pytest.approx(1 - great.confidence)
    assert classifier.predict([]) == []


def test_the_baseline_refuses_originals_of_one_label():
    with pytest.raises(ValueError, match="at least two labels"):
        BaselineLabelClassifier().fit(POSITIVE, ["positive"] * 4)


def test_the_sentiment_lexicon_tells_words_no_original_had():
    labels = ["positive"] * 4 + ["negative"] * 4
    plain = BaselineLabelClassifier().fit(POSITIVE + NEGATIVE, labels)
    lexicon = BaselineLabelClassifier(sentiment_lexicon=True).fit(POSITIVE + NEGATIVE, labels)
    # Words no original had ("superb", "lovely"), and "great" outweighed by what follows.
    probes = ["a superb story", "lovely music", "great acting, sadly ruined by a horrible plot"]
    assert [p.label for p in lexicon.predict(probes)] == ["positive", "positive", "negative"]
    assert [p.label for p in plain.predict(probes)] == ["negative", "negative", "positive"]
    assert lexicon.uses_lexicon and not plain.uses_lexicon


def _rows(count: int, *, counterfactuals: int) -> list[LabeledText]:
    """`count` originals of both labels, then counterfactuals of the first ones."""
    rows = [
        LabeledText(
            f"{POSITIVE[i % 4] if i % 2 else NEGATIVE[i % 4]} number{i}",
            "positive" if i % 2 else "negative",
            group=f"o{i}",
        )
        for i in range(count)
    ]
    rows += [
        LabeledText(
            f"{NEGATIVE[i % 4] if i % 2 else POSITIVE[i % 4]} number{i}",
            "negative" if i % 2 else "positive",
            group=f"o{i}",
            counterfactual=True,
        )
        for i in range(counterfactuals)
    ]
    return rows


def test_the_lexicon_is_checked_against_the_counterfactuals_once_there_are_enough(monkeypatch):
    checked = []
    original = BaselineLabelClassifier._lexicon_helps

    def spy(self, texts, labels, contexts, counterfactual, groups):
        checked.append(sum(counterfactual or ()))
        return original(self, texts, labels, contexts, counterfactual, groups)

    monkeypatch.setattr(BaselineLabelClassifier, "_lexicon_helps", spy)
    few = _rows(30, counterfactuals=LEXICON_CHECK_MIN_COUNTERFACTUALS - 1)
    classifier = BaselineLabelClassifier(sentiment_lexicon=True).fit(
        [r.text for r in few],
        [r.label for r in few],
        counterfactual=[r.counterfactual for r in few],
    )
    assert classifier.uses_lexicon  # too few labeled counterfactuals to judge it: kept
    many = _rows(30, counterfactuals=LEXICON_CHECK_MIN_COUNTERFACTUALS)
    BaselineLabelClassifier(sentiment_lexicon=True).fit(
        [r.text for r in many],
        [r.label for r in many],
        counterfactual=[r.counterfactual for r in many],
        groups=[r.group for r in many],
    )
    assert checked == [LEXICON_CHECK_MIN_COUNTERFACTUALS - 1, LEXICON_CHECK_MIN_COUNTERFACTUALS]


def test_out_of_fold_predictions_come_from_models_that_never_saw_the_group(monkeypatch):
    rows = _rows(12, counterfactuals=4)
    fitted_without = []
    fit = label_classifiers.fit_baseline

    def spy(training, **kwargs):
        if kwargs.get("check_lexicon", True):  # the one check of the lexicon, on every row
            assert len(training) == len(rows)
        else:
            fitted_without.append({row.group for row in rows} - {row.group for row in training})
        return fit(training, **kwargs)

    monkeypatch.setattr(label_classifiers, "fit_baseline", spy)
    label_classifiers.fold_models_clear()
    targets = [("a terrible film number1", "o1"), ("great acting number2", "o2"), ("x", "o7")]
    predictions = predict_out_of_fold(
        rows,
        [text for text, _ in targets],
        None,
        [group for _, group in targets],
        sentiment_lexicon=True,
        folds=2,
    )

    # The 12 originals are dealt into 2 parts; each model leaves one part out, and each
    # text is predicted by the model that left its original out.
    assert len(fitted_without) == 2
    assert [len(left_out) for left_out in fitted_without] == [6, 6]
    assert set().union(*fitted_without) == {row.group for row in rows}
    for (_, group), prediction in zip(targets, predictions, strict=True):
        assert prediction is not None
        assert any(group in left_out for left_out in fitted_without)
    assert predictions[0].label == "negative"

    # The next call with the same rows (the next chunk) fits nothing again.
    fitted_without.clear()
    again = predict_out_of_fold(
        rows, ["great acting number5"], None, ["o5"], sentiment_lexicon=True, folds=2
    )
    assert fitted_without == [] and again[0] is not None


def test_out_of_fold_falls_back_to_every_row_and_else_predicts_nothing():
    # Leaving the only negative original's group out leaves one label: the model of every
    # row predicts that part.
    rows = [
        LabeledText("a great film", "positive", group="a"),
        LabeledText("great acting", "positive", group="b"),
        LabeledText("a terrible film", "negative", group="c"),
    ]
    [prediction] = predict_out_of_fold(
        rows, ["a dull terrible film"], None, ["c"], sentiment_lexicon=False
    )
    assert prediction is not None and prediction.label == "negative"
    one_label = rows[:2]
    assert predict_out_of_fold(one_label, ["a film"], None, ["a"], sentiment_lexicon=False) == [
        None
    ]


def test_the_check_counts_originals_a_model_never_saw_against_the_majority_label():
    label_classifiers.fold_models_clear()
    words = _rows(12, counterfactuals=4)
    check = check_out_of_fold(words, pair_task=False, sentiment_lexicon=False, folds=3)
    # The 12 originals only (the 4 counterfactuals are not counted), 6 of each label.
    assert (check.of, check.majority) == (12, 6)
    assert check.right == 12 and check.better_than_majority and check.accuracy == 1.0
    # Labels that the words do not carry: no better than the most common label.
    shuffled = [
        LabeledText(f"film review number{i}", "positive" if i % 3 else "negative", group=f"s{i}")
        for i in range(12)
    ]
    noise = check_out_of_fold(shuffled, pair_task=False, sentiment_lexicon=False, folds=3)
    assert (noise.of, noise.majority) == (12, 8)
    assert noise.right <= noise.majority and not noise.better_than_majority


def test_the_check_leaves_out_parts_the_fallback_model_saw_and_needs_two_labels():
    rows = [
        LabeledText("a great film", "positive", group="a"),
        LabeledText("great acting", "positive", group="b"),
        LabeledText("a terrible film", "negative", group="c"),
    ]
    # Leaving "c" out leaves one label, so its part would be predicted by a model that saw
    # it: only "a" and "b" are counted.
    check = check_out_of_fold(rows, pair_task=False, sentiment_lexicon=False, folds=3)
    assert check is not None and check.of == 2
    one_label = check_out_of_fold(rows[:2], pair_task=False, sentiment_lexicon=False)
    assert one_label is None
    one_group = [LabeledText("x", "positive", group="a"), LabeledText("y", "negative", group="a")]
    assert check_out_of_fold(one_group, pair_task=False, sentiment_lexicon=False) is None


def test_a_prediction_without_probabilities_reads_them_from_its_confidence():
    prediction = LabelPrediction("negative", 0.8)
    assert prediction.probability("negative") == 0.8
    assert prediction.probability("positive") == pytest.approx(0.2)


def test_flip_scores_aim_at_the_intended_label_else_away_from_xs():
    predictions = [
        LabelPrediction("negative", 0.9),
        LabelPrediction("positive", 0.7),
        None,
        LabelPrediction("neutral", 0.6, {"neutral": 0.6, "contradiction": 0.3, "entailment": 0.1}),
    ]
    scores = flip_scores(
        predictions,
        ["positive", "positive", "positive", "entailment"],
        ["negative", None, "negative", "contradiction"],
    )
    assert scores == pytest.approx([0.9, 0.3, 0.0, 0.3])


def test_uploaded_predictions_take_labels_case_blind_and_confidence_by_default_one():
    rows = [{"id": "1", "label": "Negative", "confidence": "0.75"}, {"id": 2, "label": "positive"}]
    predictions, errors = uploaded_predictions(rows, ["negative", "positive"], ["1", "2"])
    assert errors == {}
    assert predictions == {
        "1": LabelPrediction("negative", 0.75),
        "2": LabelPrediction("positive", 1.0),
    }


def test_every_bad_uploaded_row_is_reported_with_what_is_wrong():
    rows = [
        {"id": "", "label": "negative"},
        {"id": "9", "label": "negative"},
        {"id": "1", "label": "sarcastic"},
        {"id": "1", "label": "negative", "confidence": "high"},
        {"id": "2", "label": "negative", "confidence": 1.5},
        {"id": "2", "label": "positive"},
        {"id": "2", "label": "positive"},
    ]
    predictions, errors = uploaded_predictions(rows, ["negative", "positive"], ["1", "2"])
    assert errors == {
        "row 1": ["id: Missing; give a candidate id."],
        "row 2": ["id: No candidate '9' in this campaign."],
        "row 3": ["label: Unknown label 'sarcastic'; expected one of negative, positive."],
        "row 4": ["confidence: 'high' is not a number."],
        "row 5": ["confidence: 1.5 is not between 0 and 1."],
        "row 7": ["id: '2' is also in row 6."],
    }
    assert list(predictions) == ["2"]


@pytest.fixture(scope="module")
def classifier_directory(tmp_path_factory):
    """A tiny random GPT-2 text classifier with labels NEG / POS, saved like a trained one."""
    return build_tiny_classifier(tmp_path_factory.mktemp("tiny-classifier"), ("NEG", "POS"))


def test_a_model_directory_predicts_with_its_labels_mapped_to_the_tasks(classifier_directory):
    classifier = ModelDirectoryClassifier(
        classifier_directory,
        labels=["negative", "positive"],
        label_map={"neg": "negative", "POS": "positive"},
        batch_size=2,
    )
    predictions = classifier.predict(["a great film", "a dull film", "music"])
    assert len(predictions) == 3
    for prediction in predictions:
        assert prediction.label in {"negative", "positive"}
        assert sum(prediction.probabilities.values()) == pytest.approx(1.0)
        assert prediction.confidence == max(prediction.probabilities.values())
    assert classifier.predict([]) == []


def test_a_model_whose_labels_the_task_lacks_is_refused(classifier_directory):
    with pytest.raises(ValueError, match="give a label_map"):
        ModelDirectoryClassifier(classifier_directory, labels=["negative", "positive"])


def test_a_directory_that_is_no_classifier_is_refused(tmp_path):
    with pytest.raises(ValueError, match="No model directory"):
        ModelDirectoryClassifier(tmp_path / "missing")
    with pytest.raises(ValueError, match="not a text-classification model directory"):
        ModelDirectoryClassifier(tmp_path)
