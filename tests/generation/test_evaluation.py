"""Table 2 and Table 3 of Polyjuice §4 on hand-built data whose figures are known."""

import numpy as np
import pytest

import generation.evaluation as evaluation
from generation.evaluation import (
    AugmentationConfig,
    BootstrapConfig,
    LabeledCounterfactual,
    Predictions,
    augmentation_report,
    contrast_report,
    contrast_set,
    cross_fitted_predictions,
    labels_from_probabilities,
    trained_predictions,
)
from generation.records import OriginalRecord

POS, NEG = "positive", "negative"


def _original(key, label, text=None):
    return OriginalRecord(key=key, text=text or f"text of {key}", label=label)


def _counterfactual(key, original_key, label, text=None):
    return LabeledCounterfactual(
        key=key, original_key=original_key, text=text or f"text of {key}", label=label
    )


# A and D have flips; E has none. d2 keeps D's label, so it is not in the contrast set.
ORIGINALS = [
    _original("A", NEG),
    _original("B", NEG),
    _original("C", POS),
    _original("D", POS),
    _original("E", NEG),
]
COUNTERFACTUALS = [
    _counterfactual("a1", "A", POS),
    _counterfactual("a2", "A", POS),
    _counterfactual("b1", "B", POS),
    _counterfactual("c1", "C", NEG),
    _counterfactual("d1", "D", NEG),
    _counterfactual("d2", "D", POS),
]
# Right on A, B, D, wrong on C and E; on the contrast set right on a1, c1, d1, wrong on a2, b1.
PREDICTIONS = Predictions(
    originals={"A": NEG, "B": NEG, "C": NEG, "D": POS, "E": POS},
    counterfactuals={"a1": POS, "a2": NEG, "b1": NEG, "c1": NEG, "d1": NEG, "d2": NEG},
)


def test_contrast_set_keeps_the_label_flips_by_original():
    groups = contrast_set(ORIGINALS, COUNTERFACTUALS)
    assert {key: [c.key for c in group] for key, group in groups.items()} == {
        "A": ["a1", "a2"],
        "B": ["b1"],
        "C": ["c1"],
        "D": ["d1"],
    }


def test_table2_figures_are_counted_exactly():
    report = contrast_report(ORIGINALS, COUNTERFACTUALS, PREDICTIONS)

    assert (report.originals, report.counterfactuals) == (4, 5)
    assert report.original_accuracy.value == pytest.approx(3 / 4)
    assert (report.original_accuracy.correct, report.original_accuracy.total) == (3, 4)
    assert report.contrast_accuracy.value == pytest.approx(3 / 5)
    assert (report.contrast_accuracy.correct, report.contrast_accuracy.total) == (3, 5)
    assert report.drop.value == pytest.approx(3 / 5 - 3 / 4)
    # A: a2 wrong; B: b1 wrong; C: the original wrong; only D is right throughout.
    assert report.consistency.value == pytest.approx(1 / 4)
    assert (report.consistency.correct, report.consistency.total) == (1, 4)
    # Every original with a prediction, E (no flip, wrong) included: "Dev." of Table 2.
    assert report.all_originals_accuracy.value == pytest.approx(3 / 5)
    assert report.all_originals_accuracy.total == 5


def test_intervals_hold_the_estimate_and_repeat_with_the_seed():
    report = contrast_report(ORIGINALS, COUNTERFACTUALS, PREDICTIONS)
    again = contrast_report(ORIGINALS, COUNTERFACTUALS, PREDICTIONS)

    for figure in (
        report.original_accuracy,
        report.contrast_accuracy,
        report.drop,
        report.consistency,
    ):
        assert figure.low <= figure.value <= figure.high
        assert figure.low < figure.high  # four originals leave room for doubt
    assert report == again
    assert report.bootstrap == BootstrapConfig(replicates=1000, confidence=0.95, seed=0)


def test_the_interval_narrows_with_more_originals_and_moves_with_the_seed():
    rng = np.random.default_rng(3)
    originals = [_original(f"o{i}", NEG) for i in range(400)]
    counterfactuals = [_counterfactual(f"c{i}", f"o{i}", POS) for i in range(400)]
    predictions = Predictions(
        originals={o.key: NEG if rng.random() < 0.9 else POS for o in originals},
        counterfactuals={c.key: POS if rng.random() < 0.7 else NEG for c in counterfactuals},
    )
    few = contrast_report(originals[:20], counterfactuals[:20], predictions)
    many = contrast_report(originals, counterfactuals, predictions)
    reseeded = contrast_report(
        originals, counterfactuals, predictions, bootstrap=BootstrapConfig(seed=7)
    )

    def width(figure):
        return figure.high - figure.low

    assert width(many.contrast_accuracy) < width(few.contrast_accuracy)
    assert width(many.contrast_accuracy) == pytest.approx(
        2 * 1.96 * (0.7 * 0.3 / 400) ** 0.5, rel=0.25
    )
    assert (reseeded.drop.low, reseeded.drop.high) != (many.drop.low, many.drop.high)
    assert reseeded.drop.value == many.drop.value


def test_a_perfect_model_has_a_degenerate_interval():
    perfect = Predictions(
        originals={o.key: o.label for o in ORIGINALS},
        counterfactuals={c.key: c.label for c in COUNTERFACTUALS},
    )
    report = contrast_report(ORIGINALS, COUNTERFACTUALS, perfect)
    assert report.consistency.value == report.consistency.low == report.consistency.high == 1.0
    assert report.drop.value == report.drop.low == report.drop.high == 0.0


def test_a_tied_prediction_counts_as_wrong():
    assert labels_from_probabilities(np.array([[0.5, 0.5], [0.2, 0.8]]), [NEG, POS]) == [
        None,
        POS,
    ]
    undecided = Predictions(
        originals={**PREDICTIONS.originals, "D": None}, counterfactuals=PREDICTIONS.counterfactuals
    )
    report = contrast_report(ORIGINALS, COUNTERFACTUALS, undecided)
    assert report.original_accuracy.correct == 2
    assert report.consistency.correct == 0


def test_table2_refuses_what_it_cannot_score():
    with pytest.raises(ValueError, match="no contrast set"):
        contrast_report(ORIGINALS, [_counterfactual("d2", "D", POS)], PREDICTIONS)
    missing = Predictions(originals={"A": NEG}, counterfactuals=PREDICTIONS.counterfactuals)
    with pytest.raises(ValueError, match=r"No prediction for 3 original\(s\) of the contrast set"):
        contrast_report(ORIGINALS, COUNTERFACTUALS, missing)
    missing = Predictions(originals=PREDICTIONS.originals, counterfactuals={"a1": POS})
    with pytest.raises(ValueError, match="contrast counterfactual"):
        contrast_report(ORIGINALS, COUNTERFACTUALS, missing)
    with pytest.raises(ValueError, match="not among the originals"):
        contrast_report(ORIGINALS, [_counterfactual("z1", "Z", POS)], PREDICTIONS)
    with pytest.raises(ValueError, match="appears twice"):
        contrast_report([*ORIGINALS, ORIGINALS[0]], COUNTERFACTUALS, PREDICTIONS)
    with pytest.raises(ValueError, match="replicates"):
        BootstrapConfig(replicates=0)
    with pytest.raises(ValueError, match="Confidence"):
        BootstrapConfig(confidence=1.0)


# The baseline -----------------------------------------------------------------------------

GOOD = ["great", "wonderful", "superb", "lovely", "brilliant", "charming"]
BAD = ["awful", "boring", "dreadful", "dull", "terrible", "tedious"]


def test_cross_fitting_never_predicts_what_the_model_was_trained_on():
    # Each original's only clue is a word no other original has: a model that saw the
    # original would recall its label; a model that did not can only guess the prior.
    originals = [
        _original(f"o{i}", POS if i % 2 else NEG, text=f"zq{i}x zq{i}y") for i in range(20)
    ]
    counterfactuals = [_counterfactual(f"c{i}", f"o{i}", NEG if i % 2 else POS) for i in range(20)]

    predicted = cross_fitted_predictions(originals, counterfactuals, folds=5, seed=0)
    recalled = trained_predictions(originals, originals, counterfactuals)

    assert set(predicted.originals) == {o.key for o in originals}
    assert set(predicted.counterfactuals) == {c.key for c in counterfactuals}
    cross_fitted_right = sum(predicted.originals[o.key] == o.label for o in originals)
    recalled_right = sum(recalled.originals[o.key] == o.label for o in originals)
    assert recalled_right == 20
    assert cross_fitted_right <= 12


def test_cross_fitting_refuses_a_single_label_and_a_lone_label():
    only_negative = [_original(f"o{i}", NEG) for i in range(6)]
    with pytest.raises(ValueError, match="Upload a training set or the model's predictions"):
        cross_fitted_predictions(only_negative, [])
    lone_positive = [*only_negative, _original("p", POS)]
    with pytest.raises(ValueError, match="'positive' has a single original"):
        cross_fitted_predictions(lone_positive, [])
    with pytest.raises(ValueError, match="at least 2 folds"):
        cross_fitted_predictions(lone_positive, [], folds=1)


def test_pair_tasks_read_the_context_of_originals_and_of_their_counterfactuals():
    # The text never changes; only the premise (context) tells the labels apart.
    originals = [
        OriginalRecord(f"o{i}", "the same hypothesis", POS if i % 2 else NEG, context=premise)
        for i, premise in enumerate(["alpha wins", "beta wins"] * 6)
    ]
    counterfactuals = [
        _counterfactual(f"c{i}", f"o{i}", POS, "the same hypothesis") for i in range(12)
    ]

    predicted = cross_fitted_predictions(originals, counterfactuals, folds=3)

    assert all(predicted.originals[o.key] == o.label for o in originals)
    # x̂ take their original's premise: the same text gets the original's label back.
    assert all(predicted.counterfactuals[f"c{i}"] == originals[i].label for i in range(12))


def test_a_baseline_trained_elsewhere_scores_the_contrast_set():
    training = [_original(f"t{i}", POS, f"a {word} story") for i, word in enumerate(GOOD)] + [
        _original(f"u{i}", NEG, f"a {word} story") for i, word in enumerate(BAD)
    ]
    originals = [_original("A", POS, "truly great"), _original("B", NEG, "truly awful")]
    counterfactuals = [
        _counterfactual("a1", "A", NEG, "truly dull"),
        _counterfactual("b1", "B", POS, "truly lovely"),
    ]

    predicted = trained_predictions(training, originals, counterfactuals)
    report = contrast_report(originals, counterfactuals, predicted)

    assert report.original_accuracy.value == 1.0
    assert report.contrast_accuracy.value == 1.0
    with pytest.raises(ValueError, match="only \\['positive'\\]"):
        trained_predictions(training[:6], originals, counterfactuals)
    with pytest.raises(ValueError, match="empty"):
        trained_predictions([], originals, counterfactuals)


# Table 3 ----------------------------------------------------------------------------------


def _spurious_dataset(originals_per_label: int = 48, every: int = 3, tagged: bool = False):
    """Positives say "movie", negatives "film": a cue that predicts every original perfectly.

    Counterfactuals swap only the sentiment word, so the cue points the wrong way on each
    of them; every third original has one. `tagged` ends each text with its own key, so
    that every text is unique.
    """
    originals, counterfactuals = [], []
    for i in range(originals_per_label):
        good, bad = GOOD[i % 6], BAD[(i * 5) % 6]
        tag = (lambda key: f" {key}") if tagged else (lambda key: "")
        originals.append(_original(f"p{i}", POS, f"the movie was {good}{tag(f'p{i}')}"))
        originals.append(_original(f"n{i}", NEG, f"the film was {bad}{tag(f'n{i}')}"))
        if i % every == 0:
            counterfactuals.append(
                _counterfactual(f"cp{i}", f"p{i}", NEG, f"the movie was {bad}{tag(f'cp{i}')}")
            )
            counterfactuals.append(
                _counterfactual(f"cn{i}", f"n{i}", POS, f"the film was {good}{tag(f'cn{i}')}")
            )
    return originals, counterfactuals


def test_counterfactual_augmentation_fixes_the_spurious_cue():
    originals, counterfactuals = _spurious_dataset()

    report = augmentation_report(
        originals, counterfactuals, config=AugmentationConfig(n=30, m=20, seeds=(0, 1, 2))
    )

    assert (report.n, report.m, report.seeds) == (30, 20, (0, 1, 2))
    assert [split.seed for split in report.splits] == [0, 1, 2]
    assert all(split.test_contrast > 0 and split.test_originals > 0 for split in report.splits)
    # Both models get the originals right; only aug gets their counterfactuals right.
    assert report.comp_original_accuracy.mean == report.aug_original_accuracy.mean == 1.0
    assert report.comp_contrast_accuracy.mean == 0.0
    assert report.aug_contrast_accuracy.mean == 1.0
    assert report.aug_contrast_accuracy.std == 0.0


def test_held_out_originals_and_their_counterfactuals_are_never_trained_on(monkeypatch):
    originals, counterfactuals = _spurious_dataset(tagged=True)
    counterfactuals_of = {}
    for counterfactual in counterfactuals:
        counterfactuals_of.setdefault(counterfactual.original_key, []).append(counterfactual.text)
    trained: list[set[str]] = []
    fit = evaluation.BaselineClassifier.fit

    def recording_fit(self, texts, labels, contexts=None):
        trained.append(set(texts))
        return fit(self, texts, labels, contexts)

    monkeypatch.setattr(evaluation.BaselineClassifier, "fit", recording_fit)
    splits = []
    draw = evaluation._draw_split
    monkeypatch.setattr(
        evaluation, "_draw_split", lambda *a, **k: splits.append(draw(*a, **k)) or splits[-1]
    )

    report = augmentation_report(
        originals, counterfactuals, config=AugmentationConfig(seeds=(4, 5))
    )

    assert len(trained) == 4  # comp then aug, for each of the two splits
    for split, (comp, aug) in zip(splits, (trained[0:2], trained[2:4]), strict=True):
        held_out = {o.text for o in split.test}
        held_out |= {text for o in split.test for text in counterfactuals_of.get(o.key, [])}
        assert split.test_contrast and not held_out & (comp | aug)
        assert len(comp) == len(aug) == report.n + report.m
        assert len(aug - {o.text for o in originals}) == report.m  # m counterfactuals
    # Default sizes: comp uses every training-side original, aug swaps m of them for x̂.
    train_side = min(len(split.train) for split in splits)
    assert report.n + report.m == train_side
    assert report.m == min(
        min(sum(len(g) for g in split.groups) for split in splits), train_side // 2
    )


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (AugmentationConfig(m=500), "m = 500 counterfactuals asked for"),
        (AugmentationConfig(n=60, m=20), "n \\+ m = 80 originals are needed"),
        (AugmentationConfig(n=2, m=20), "n = 2 is smaller than the"),
        (AugmentationConfig(n=67), "No room for counterfactuals"),
    ],
)
def test_table3_refuses_sizes_the_data_cannot_give(config, message):
    originals, counterfactuals = _spurious_dataset()
    with pytest.raises(ValueError, match=message):
        augmentation_report(originals, counterfactuals, config=config)


def test_table3_refuses_too_little_data():
    originals, counterfactuals = _spurious_dataset()
    with pytest.raises(ValueError, match="at least two: one to train on"):
        augmentation_report(originals, counterfactuals[:1])
    # One label in a training set: every original negative, every x̂ positive.
    negatives = [_original(f"n{i}", NEG, f"the film was {BAD[i % 6]}") for i in range(10)]
    flips = [
        _counterfactual(f"c{i}", f"n{i}", POS, f"the film was {GOOD[i % 6]}") for i in range(4)
    ]
    with pytest.raises(ValueError, match=r"comp's training set \(split seed 0\).*only"):
        augmentation_report(negatives, flips, config=AugmentationConfig(n=3, m=2, seeds=(0,)))


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"test_fraction": 0}, "test_fraction"),
        ({"test_fraction": 1.0}, "test_fraction"),
        ({"seeds": ()}, "at least one seed"),
        ({"seeds": (1, 1)}, "Seeds repeat"),
        ({"n": 0}, "n must be at least 1"),
        ({"m": -1}, "m must be at least 1"),
    ],
)
def test_augmentation_config_rejects_bad_settings(fields, message):
    with pytest.raises(ValueError, match=message):
        AugmentationConfig(**fields)
