"""Running an evaluation of a campaign's counterfactuals and storing it (Polyjuice Tables 2 and 3).

Table 2 scores a model on the contrast set: the researcher's uploaded predictions, or
the TF-IDF baseline trained on an uploaded training set, or cross-fitted on the
campaign's own originals. Table 3 trains the baseline on originals against originals
plus counterfactuals. The numbers come from `generation.evaluation`; this module reads
the campaign, checks what was uploaded, and keeps every run.
"""

import dataclasses
import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from django.db import transaction

from cfannotate.campaigns.models import Campaign
from cfannotate.core.exceptions import InvalidInput
from cfannotate.core.text import counted
from cfannotate.evaluation.models import Evaluation, EvaluationKind, EvaluationSource
from cfannotate.evaluation.selectors import EvaluationData, evaluation_data
from generation.evaluation import (
    AugmentationConfig,
    BootstrapConfig,
    Predictions,
    SizeError,
    augmentation_report,
    contrast_report,
    cross_fitted_predictions,
    labels_from_probabilities,
    trained_predictions,
)
from generation.priority import predictions_from_rows
from generation.records import OriginalRecord

DEFAULT_FOLDS = 5
DEFAULT_SEEDS = (0, 1, 2)
DEFAULT_TEST_FRACTION = 0.3
DEFAULT_BOOTSTRAP = 1000
MAX_BOOTSTRAP = 10_000
MAX_FOLDS = 20
MAX_SEEDS = 10
# Seeds reach NumPy and scikit-learn, which take 0 to 2**32 - 1.
MAX_SEED = 2**32 - 1
# Table 3's sizes count originals and counterfactuals: far more than a campaign holds.
MAX_SIZE = 1_000_000


def _require(condition: bool, field: str, message: str) -> None:
    if not condition:
        raise InvalidInput(message, fields={field: [message]})


def evaluation_run(
    *,
    campaign: Campaign,
    kind: str,
    user=None,
    predictions: Sequence[Mapping] | None = None,
    training_records: Sequence[Mapping] | None = None,
    folds: int = DEFAULT_FOLDS,
    seed: int = 0,
    bootstrap: int = DEFAULT_BOOTSTRAP,
    n: int | None = None,
    m: int | None = None,
    test_fraction: float = DEFAULT_TEST_FRACTION,
    seeds: Sequence[int] = DEFAULT_SEEDS,
) -> Evaluation:
    """Compute Table 2 or Table 3 for the campaign's kept counterfactuals and store the run.

    Table 2 takes at most one of `predictions` (rows {id | candidate_id, label |
    probabilities}) and `training_records` (rows {text, context?, label}); with neither,
    the baseline is cross-fitted over `folds` folds of the campaign's originals.
    Table 3 takes `n`, `m`, `test_fraction` and `seeds` (see AugmentationConfig).
    """
    _require(
        kind in EvaluationKind.values,
        "kind",
        f"Unknown kind {kind!r}; choose one of: {', '.join(EvaluationKind.values)}.",
    )
    if kind == EvaluationKind.TABLE3:
        for name, value in (("predictions", predictions), ("training_records", training_records)):
            _require(
                value is None,
                name,
                "Table 3 trains the baseline on the campaign's own originals and "
                "counterfactuals; uploads are for Table 2.",
            )
        source, parameters, result = _table3(
            campaign, n=n, m=m, test_fraction=test_fraction, seeds=seeds
        )
    else:
        source, parameters, result = _table2(
            campaign,
            predictions=predictions,
            training_records=training_records,
            folds=folds,
            seed=seed,
            bootstrap=bootstrap,
        )
    return _evaluation_store(
        campaign=campaign, kind=kind, source=source, parameters=parameters, result=result, user=user
    )


@transaction.atomic
def _evaluation_store(
    *, campaign: Campaign, kind: str, source: str, parameters: dict, result: dict, user
) -> Evaluation:
    evaluation = Evaluation(
        campaign=campaign,
        kind=kind,
        source=source,
        parameters=parameters,
        result=result,
        created_by=user if user is not None and user.is_authenticated else None,
    )
    evaluation.full_clean()
    evaluation.save()
    return evaluation


def _as_json(report: Any) -> dict:
    """The report as stored: what a reload from the JSON column gives (tuples become lists)."""
    return json.loads(json.dumps(dataclasses.asdict(report)))


def _table2(
    campaign: Campaign,
    *,
    predictions: Sequence[Mapping] | None,
    training_records: Sequence[Mapping] | None,
    folds: int,
    seed: int,
    bootstrap: int,
) -> tuple[str, dict, dict]:
    _require(
        predictions is None or training_records is None,
        "predictions",
        "Give either predictions to score or a training set for the baseline, not both.",
    )
    _require(
        1 <= bootstrap <= MAX_BOOTSTRAP,
        "bootstrap",
        f"bootstrap must be between 1 and {MAX_BOOTSTRAP} resamples, got {bootstrap}.",
    )
    _require(0 <= seed <= MAX_SEED, "seed", f"seed must be between 0 and {MAX_SEED}, got {seed}.")
    data = evaluation_data(campaign, kind=EvaluationKind.TABLE2)
    if not data.counterfactuals:
        raise InvalidInput(
            "There is no contrast set yet: no kept counterfactual has a label different from its "
            "original's. Label counterfactuals and run quality control first."
        )
    parameters: dict[str, Any] = {"bootstrap": bootstrap, "bootstrap_seed": 0, "confidence": 0.95}
    extra: dict[str, Any] = {}
    try:
        if predictions is not None:
            source = EvaluationSource.UPLOADED
            predicted = _uploaded_predictions(campaign, predictions, data)
            parameters.update(training=None, prediction_rows=len(predictions))
        elif training_records is not None:
            source = EvaluationSource.BASELINE
            training = _training_rows(campaign, training_records)
            predicted = trained_predictions(
                training, data.originals, data.counterfactuals, seed=seed
            )
            parameters.update(training="uploaded", training_rows=len(training), seed=seed)
            seen = {(row.context, row.text) for row in training}
            extra["training_overlap"] = sum(
                (original.context, original.text) in seen for original in data.originals
            )
        else:
            source = EvaluationSource.BASELINE
            _require(
                2 <= folds <= MAX_FOLDS,
                "folds",
                f"folds must be between 2 and {MAX_FOLDS}, got {folds}.",
            )
            predicted = cross_fitted_predictions(
                data.originals, data.counterfactuals, folds=folds, seed=seed
            )
            parameters.update(training="cross_fitted", folds=folds, seed=seed)
        report = contrast_report(
            data.originals,
            data.counterfactuals,
            predicted,
            bootstrap=BootstrapConfig(replicates=bootstrap),
        )
    except ValueError as error:
        # With a training set, what the baseline cannot learn is that set's problem.
        fields = {"training_records": [str(error)]} if training_records is not None else {}
        raise InvalidInput(f"Table 2 cannot be computed: {error}", fields=fields) from None
    return source, parameters, {**_as_json(report), **extra}


def _table3(
    campaign: Campaign,
    *,
    n: int | None,
    m: int | None,
    test_fraction: float,
    seeds: Sequence[int],
) -> tuple[str, dict, dict]:
    for name, value in (("n", n), ("m", m)):
        _require(
            value is None or 1 <= value <= MAX_SIZE,
            name,
            f"{name} must be between 1 and {MAX_SIZE:,}, got {value}.",
        )
    _require(
        0 < test_fraction < 1,
        "test_fraction",
        f"test_fraction must lie strictly between 0 and 1, got {test_fraction}.",
    )
    seeds = list(seeds)
    _require(
        1 <= len(seeds) <= MAX_SEEDS,
        "seeds",
        f"Give between 1 and {MAX_SEEDS} seeds, got {len(seeds)}.",
    )
    _require(len(set(seeds)) == len(seeds), "seeds", f"Seeds repeat: {seeds}.")
    _require(
        all(0 <= seed <= MAX_SEED for seed in seeds),
        "seeds",
        f"Each seed must be between 0 and {MAX_SEED}.",
    )
    data = evaluation_data(campaign, kind=EvaluationKind.TABLE3)
    config = AugmentationConfig(n=n, m=m, test_fraction=test_fraction, seeds=tuple(seeds))
    try:
        report = augmentation_report(data.originals, data.counterfactuals, config=config)
    except SizeError as error:
        raise InvalidInput(
            f"Table 3 cannot be computed: {error}",
            fields={option: [str(error)] for option in error.options},
        ) from None
    except ValueError as error:
        raise InvalidInput(f"Table 3 cannot be computed: {error}") from None
    parameters = {"n": n, "m": m, "test_fraction": test_fraction, "seeds": seeds}
    return EvaluationSource.BASELINE, parameters, _as_json(report)


def _uploaded_predictions(
    campaign: Campaign, rows: Sequence[Mapping], data: EvaluationData
) -> Predictions:
    """Rows name an original by `id` (its external id) or a counterfactual by `candidate_id`."""
    label_order = list(campaign.labels.values_list("value", flat=True))
    keyed = []
    for row in rows:
        if isinstance(row, Mapping) and row.get("candidate_id") not in (None, ""):
            keyed.append({**row, "id": f"counterfactual {row['candidate_id']}"})
        elif isinstance(row, Mapping) and row.get("id") not in (None, ""):
            keyed.append({**row, "id": f"original {row['id']}"})
        else:
            keyed.append(row)
    known = [f"original {original.key}" for original in data.originals] + [
        f"counterfactual {key}" for key in campaign.candidates.values_list("id", flat=True)
    ]
    try:
        by_id = predictions_from_rows(keyed, label_order, known_ids=known)
    except ValueError as error:
        raise InvalidInput(
            f"The predictions are invalid: {error}", fields={"predictions": [str(error)]}
        ) from None
    predicted = Predictions(originals={}, counterfactuals={})
    if by_id:
        keys = list(by_id)
        labels = labels_from_probabilities(np.stack([by_id[key] for key in keys]), label_order)
        for key, label in zip(keys, labels, strict=True):
            kind, _, name = key.partition(" ")
            target = predicted.originals if kind == "original" else predicted.counterfactuals
            target[name] = label
    # The figures need the originals of the contrast set and its counterfactuals.
    needed = (
        (
            "original",
            "id",
            sorted({c.original_key for c in data.counterfactuals}),
            predicted.originals,
        ),
        (
            "counterfactual",
            "candidate_id",
            [c.key for c in data.counterfactuals],
            predicted.counterfactuals,
        ),
    )
    for what, id_field, keys, given in needed:
        absent = [key for key in keys if key not in given]
        if absent:
            problem = (
                f"Predictions are missing for {counted(len(absent), what)} of the contrast set, "
                f"e.g. {id_field} {absent[0]!r}."
            )
            raise InvalidInput(
                f"The predictions are incomplete: {problem}", fields={"predictions": [problem]}
            )
    return predicted


def _training_rows(campaign: Campaign, records: Sequence[Mapping]) -> list[OriginalRecord]:
    labels = set(campaign.labels.values_list("value", flat=True))
    rows = []
    for number, record in enumerate(records, start=1):
        where = f"Training row {number}"
        problem = None
        if not isinstance(record, Mapping):
            problem = f"{where} is not an object with a text and a label."
        elif not isinstance(record.get("text"), str) or not record["text"].strip():
            problem = f"{where} has no text."
        elif not isinstance(record.get("context", ""), str | type(None)):
            problem = f"{where}: context must be text."
        elif str(record.get("label", "")) not in labels:
            problem = (
                f"{where}: unknown label {record.get('label')!r}; expected one of {sorted(labels)}."
            )
        if problem:
            raise InvalidInput(
                f"The training set is invalid: {problem}", fields={"training_records": [problem]}
            )
        rows.append(
            OriginalRecord(
                key=str(number),
                text=record["text"],
                label=str(record["label"]),
                context=record.get("context") or "",
            )
        )
    if not rows:
        raise InvalidInput(
            "The training set is empty.", fields={"training_records": ["Give at least one row."]}
        )
    return rows
