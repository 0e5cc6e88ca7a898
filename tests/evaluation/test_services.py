"""evaluation_run: figures from the kept labels, stored runs, refusals that store nothing."""

import pytest

from cfannotate.core.exceptions import InvalidInput
from cfannotate.evaluation.models import Evaluation, EvaluationKind, EvaluationSource
from cfannotate.evaluation.selectors import evaluation_data, latest_evaluations
from cfannotate.evaluation.services import evaluation_run
from tests.evaluation.conftest import exact_predictions
from tests.factories import make_campaign, make_original


def test_evaluation_data_reads_the_export_sets(labeled):
    table2 = evaluation_data(labeled.campaign, kind=EvaluationKind.TABLE2)
    table3 = evaluation_data(labeled.campaign, kind=EvaluationKind.TABLE3)

    c = labeled.candidates
    assert [x.key for x in table2.counterfactuals] == [str(c["a1"].id), str(c["b1"].id)]
    assert [x.key for x in table3.counterfactuals] == [
        str(c["a1"].id),
        str(c["a2"].id),
        str(c["b1"].id),
    ]
    assert table2.counterfactuals[0].original_key == labeled.originals["A"].external_id
    assert [x.label for x in table3.counterfactuals] == ["positive", "negative", "positive"]
    assert len(table2.originals) == labeled.campaign.originals.count()


def test_uploaded_predictions_give_exact_figures_and_are_stored(labeled, researcher):
    evaluation = evaluation_run(
        campaign=labeled.campaign,
        kind="table2",
        user=researcher,
        predictions=exact_predictions(labeled),
    )

    result = evaluation.result
    assert (evaluation.kind, evaluation.source) == (
        EvaluationKind.TABLE2,
        EvaluationSource.UPLOADED,
    )
    assert evaluation.created_by == researcher
    assert (result["originals"], result["counterfactuals"]) == (2, 2)
    assert result["original_accuracy"]["value"] == 0.5
    assert result["contrast_accuracy"]["value"] == 0.5
    assert result["drop"]["value"] == 0.0
    assert result["consistency"]["value"] == 0.5  # A and a1 both right
    assert result["consistency"]["correct"] == 1
    assert result["all_originals_accuracy"]["total"] == 2  # only A and B were predicted
    assert evaluation.parameters["prediction_rows"] == 4
    assert latest_evaluations(labeled.campaign)["table2"] == evaluation


def test_the_baseline_is_cross_fitted_on_the_campaign_originals(evaluable):
    evaluation = evaluation_run(campaign=evaluable.campaign, kind="table2", folds=3, bootstrap=200)

    result = evaluation.result
    assert evaluation.source == EvaluationSource.BASELINE
    assert evaluation.parameters == {
        "bootstrap": 200,
        "bootstrap_seed": 0,
        "confidence": 0.95,
        "training": "cross_fitted",
        "folds": 3,
        "seed": 0,
    }
    assert (result["originals"], result["counterfactuals"]) == (2, 2)
    assert result["all_originals_accuracy"]["total"] == evaluable.campaign.originals.count()
    for name in ("original_accuracy", "contrast_accuracy", "consistency"):
        figure = result[name]
        assert figure["low"] <= figure["value"] <= figure["high"]
    assert result["bootstrap"]["replicates"] == 200


def test_a_campaign_of_one_label_cannot_train_the_baseline(labeled):
    with pytest.raises(InvalidInput, match="Upload a training set or the model's predictions"):
        evaluation_run(campaign=labeled.campaign, kind="table2")
    assert not Evaluation.objects.exists()


def test_the_baseline_trains_on_an_uploaded_set_and_reports_the_overlap(labeled):
    a = labeled.originals["A"]
    training = [
        {"text": "a dull and boring story", "label": "negative"},
        {"text": "a lovely and moving story", "label": "positive"},
        {"text": a.text, "context": "", "label": "negative"},
    ]

    evaluation = evaluation_run(campaign=labeled.campaign, kind="table2", training_records=training)

    assert evaluation.source == EvaluationSource.BASELINE
    assert evaluation.parameters["training"] == "uploaded"
    assert evaluation.parameters["training_rows"] == 3
    assert evaluation.result["training_overlap"] == 1


@pytest.mark.parametrize(
    ("rows", "field", "message"),
    [
        ([{"id": "nope", "label": "negative"}], "predictions", "unknown id 'original nope'"),
        ([{"candidate_id": 999999, "label": "negative"}], "predictions", "unknown id"),
        ([{"label": "negative"}], "predictions", "has no id"),
        (["text"], "predictions", "is not an object"),
        ("bad-label", "predictions", "unknown label 'neutral'"),
        ("missing", "predictions", "missing for 1 counterfactual"),
    ],
)
def test_bad_predictions_are_refused_with_the_field(labeled, rows, field, message):
    if rows == "bad-label":
        rows = exact_predictions(labeled)
        rows[0] = {**rows[0], "label": "neutral"}
    elif rows == "missing":
        rows = exact_predictions(labeled)[:3]

    with pytest.raises(InvalidInput, match=message) as raised:
        evaluation_run(campaign=labeled.campaign, kind="table2", predictions=rows)

    assert field in raised.value.fields
    assert not Evaluation.objects.exists()


@pytest.mark.parametrize(
    ("records", "message"),
    [
        ([{"label": "negative"}], "Training row 1 has no text"),
        ([{"text": "fine", "label": "neutral"}], "unknown label 'neutral'"),
        ([{"text": "fine", "label": "negative", "context": 3}], "context must be text"),
        ([], "The training set is empty"),
    ],
)
def test_bad_training_rows_are_refused_with_the_field(labeled, records, message):
    with pytest.raises(InvalidInput, match=message) as raised:
        evaluation_run(campaign=labeled.campaign, kind="table2", training_records=records)
    assert "training_records" in raised.value.fields


def test_predictions_and_a_training_set_together_are_refused(labeled):
    with pytest.raises(InvalidInput, match="not both") as raised:
        evaluation_run(
            campaign=labeled.campaign,
            kind="table2",
            predictions=exact_predictions(labeled),
            training_records=[{"text": "x", "label": "negative"}],
        )
    assert "predictions" in raised.value.fields


def test_a_campaign_without_kept_flips_has_no_contrast_set(researcher):
    campaign = make_campaign(owner=researcher)
    make_original(campaign, label="positive")
    make_original(campaign, label="negative")

    with pytest.raises(InvalidInput, match="no contrast set yet"):
        evaluation_run(campaign=campaign, kind="table2")
    with pytest.raises(InvalidInput, match="Table 3 cannot be computed: 0 original"):
        evaluation_run(campaign=campaign, kind="table3")


def test_table3_trains_comp_and_aug_and_stores_mean_and_std(evaluable):
    evaluation = evaluation_run(
        campaign=evaluable.campaign, kind="table3", test_fraction=0.5, seeds=[0, 1]
    )

    result = evaluation.result
    assert evaluation.parameters == {"n": None, "m": None, "test_fraction": 0.5, "seeds": [0, 1]}
    assert result["m"] == 1  # the smaller group (B's b1) bounds what every split can give
    assert [split["seed"] for split in result["splits"]] == [0, 1]
    assert all(split["test_contrast"] == 1 for split in result["splits"])
    for name in ("comp", "aug"):
        for column in ("original", "contrast"):
            figure = result[f"{name}_{column}_accuracy"]
            assert 0 <= figure["mean"] <= 1 and figure["std"] >= 0


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"test_fraction": 1.5}, "test_fraction"),
        ({"seeds": []}, "seeds"),
        ({"seeds": [1, 1]}, "seeds"),
        ({"n": 0}, "n"),
        ({"seeds": [2**32]}, "seeds"),
        ({"m": 10**9}, "m"),
        ({"predictions": [{"id": "x", "label": "negative"}]}, "predictions"),
        ({"training_records": [{"text": "x", "label": "negative"}]}, "training_records"),
    ],
)
def test_table3_refuses_bad_options_with_the_field(evaluable, options, field):
    with pytest.raises(InvalidInput) as raised:
        evaluation_run(campaign=evaluable.campaign, kind="table3", **options)
    assert field in raised.value.fields


def test_table3_refuses_sizes_the_campaign_cannot_give(evaluable):
    with pytest.raises(InvalidInput, match="m = 5 counterfactuals asked for") as raised:
        evaluation_run(campaign=evaluable.campaign, kind="table3", m=5, test_fraction=0.5)
    assert list(raised.value.fields) == ["m"]


def test_table2_refuses_a_seed_numpy_cannot_take(labeled):
    with pytest.raises(InvalidInput) as raised:
        evaluation_run(campaign=labeled.campaign, kind="table2", seed=2**70)
    assert raised.value.fields == {
        "seed": [f"seed must be between 0 and {2**32 - 1}, got {2**70}."]
    }


def test_an_unknown_kind_is_refused(labeled):
    with pytest.raises(InvalidInput, match="Unknown kind 'table9'") as raised:
        evaluation_run(campaign=labeled.campaign, kind="table9")
    assert "kind" in raised.value.fields
