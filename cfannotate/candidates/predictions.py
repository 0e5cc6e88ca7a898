"""Writes of candidates' predicted labels: the classifier in the loop (issue #21, item 3).

A campaign's `flip_classifier` says where a candidate's predicted label and confidence
come from: the built-in baseline trained on the campaign's originals and its labeled
counterfactuals (`baseline_training_rows`), a text-classification model directory, or a
file the researcher uploads. Selection (`cfannotate.labeling.units`) weighs the
predicted flips against diversity.
"""

import functools
import itertools
import logging
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

from django.db.models import QuerySet

from cfannotate.campaigns.models import Campaign, FlipClassifier, TaskType
from cfannotate.candidates.models import Candidate, CandidateSource
from cfannotate.core import tabular
from cfannotate.core.bulk import batches, key_ranges, rows_update
from cfannotate.core.exceptions import InvalidInput
from cfannotate.core.row_report import rows_invalid
from cfannotate.core.text import counted

if TYPE_CHECKING:
    from generation.label_classifiers import LabeledText

logger = logging.getLogger(__name__)

MAX_PREDICTION_ROWS = 100_000
MAX_PREDICTION_BYTES = 20 * 1024 * 1024
# Each column of a predictions file and the other headers accepted for it.
PREDICTION_COLUMNS = {
    "id": ("id", "candidate_id", "candidate"),
    "label": ("label", "predicted_label", "prediction"),
    "confidence": ("confidence", "probability", "score"),
}
PREDICTION_COLUMN_NAMES = tabular.ColumnNames(PREDICTION_COLUMNS, ("id", "label"))


@functools.lru_cache(maxsize=2)
def _model_classifier(path: str, label_map: tuple[tuple[str, str], ...]):
    """A model directory loaded once per worker process and label map (pairs, hashable)."""
    from generation.label_classifiers import ModelDirectoryClassifier

    # No `labels`: whether the model's labels are the campaign's is checked by the caller,
    # whose error names the campaign's setting rather than the library's argument.
    return ModelDirectoryClassifier(path, label_map=dict(label_map))


def _model_labels_check(classifier, labels: tuple[str, ...]) -> None:
    """InvalidInput naming `flip_label_map` when a model label maps to no campaign label."""
    names = classifier.model.config.id2label
    unknown = [
        str(names[index]) for index, cls in enumerate(classifier.classes) if cls not in labels
    ]
    if not unknown:
        return
    setting = Campaign._meta.get_field("flip_label_map").verbose_name.capitalize()
    problem = (
        f"Map each to one of the campaign's labels ({', '.join(labels)}) in “{setting}” "
        f"under Settings → Selection, one per line, e.g. “{unknown[0]} = {labels[0]}”."
    )
    raise InvalidInput(
        f"The model's labels {', '.join(unknown)} are not the campaign's. {problem}",
        fields={"flip_label_map": [problem]},
    )


def baseline_training_rows(campaign: Campaign) -> list["LabeledText"]:
    """What the built-in baseline learns from: every original, then every counterfactual
    whose label is known, each with the original it belongs to (`group`). A counterfactual
    counts once, with the most trusted label it has (`hooks.label_sources`: the
    researcher's gold answer, else the crowd's kept label), else the label the researcher
    wrote it for (an imported or authored candidate nothing has judged yet). One judged
    not a valid counterfactual is left out.

    The pairs are what teach it which words carry the label (and, for sentiment, the
    lexicon; `generation.label_classifiers.BaselineLabelClassifier`). Fitted on
    originals alone, n-grams label a counterfactual by the words it shares with its
    original: on the CAD sentiment dev reviews they gave the human revisions their new
    label 0.49 of the time after 40 originals (chance), and 0.76 with the revisions of 36
    of them added (`bench/flip_classifier.py`; docs/benchmarks.md).
    """
    from cfannotate.candidates import hooks
    from generation.label_classifiers import LabeledText

    rows = [
        LabeledText(text, label, context, str(pk))
        for pk, text, label, context in campaign.originals.values_list(
            "pk", "text", "label__value", "context"
        ).order_by("pk")
    ]
    judged: dict[int, tuple[str, str, str]] = {}
    for _, source in hooks.label_sources:
        for candidate_id, text, label, context in source(campaign):
            if candidate_id not in judged:
                judged[candidate_id] = (text, label, context)
    own = (
        Candidate.objects.filter(campaign=campaign, intended_label__isnull=False)
        .exclude(source=CandidateSource.GENERATED)
        .exclude(pk__in=list(judged))
        .order_by("id")
        .values_list("id", "text", "intended_label__value", "original__context")
    )
    labeled = {pk: entry for pk, entry in judged.items() if entry[1] is not None}
    labeled |= {pk: (text, label, context) for pk, text, label, context in own}
    original_of = dict(
        Candidate.objects.filter(pk__in=list(labeled)).values_list("pk", "original_id")
    )
    rows += [
        LabeledText(text, label, context, str(original_of[pk]), counterfactual=True)
        for pk, (text, label, context) in labeled.items()
    ]
    return rows


def _uses_lexicon(campaign: Campaign) -> bool:
    """Sentiment gets a lexicon feature: it tells an edit's new polarity from the
    campaign's first originals on, before any counterfactual is labeled."""
    return campaign.task_type == TaskType.SENTIMENT


def _baseline_rows(campaign: Campaign) -> list | None:
    """The baseline's training rows; None where they hold fewer than two labels."""
    rows = baseline_training_rows(campaign)
    if len({row.label for row in rows}) < 2:
        logger.info("campaign %s: the baseline needs texts of two labels", campaign.pk)
        return None
    return rows


def baseline_label_problem(campaign: Campaign) -> str | None:
    """Why the built-in baseline predicts nothing for this campaign, or None.

    It learns from the originals and the labeled counterfactuals; with one label among
    them there is nothing to tell apart (an NLI file of one class, a first batch of
    positive reviews), and selection cannot favour label flips. One query where the
    originals hold two labels, the common case.
    """
    if campaign.flip_classifier != FlipClassifier.BASELINE:
        return None
    if campaign.originals.values("label").distinct().count() >= 2:
        return None
    if not campaign.originals.exists():
        return None
    rows = baseline_training_rows(campaign)
    labels = {row.label for row in rows}
    if len(labels) >= 2:
        return None
    names = dict(campaign.labels.values_list("value", "display_name"))
    only = ", ".join(names.get(label, label) for label in sorted(labels))
    return (
        "No label predictions: the built-in classifier learns from the originals and the "
        f"labeled counterfactuals, and all of them have the same label ({only}). Selection "
        "cannot favour candidates that change the label until it sees a second one: add "
        "originals of another label, label some counterfactuals (gold rounds), upload your "
        "own predictions below, or name a classifier model in Settings → Selection."
    )


def baseline_is_weak(campaign: Campaign) -> bool:
    """The built-in baseline is the classifier, and its last check on the originals it did
    not learn from got no more of them right than the most common label alone."""
    check = campaign.flip_classifier_check or {}
    return (
        campaign.flip_classifier == FlipClassifier.BASELINE
        and bool(check.get("of"))
        and check["right"] <= check["majority"]
    )


def selection_flip_weight(campaign: Campaign) -> float:
    """How much selection favours predicted flips: the campaign's `flip_weight`; 0 without
    a classifier, and 0 while the baseline is weak (`baseline_is_weak`), whose predicted
    flips are noise that would only push diverse candidates out."""
    if campaign.flip_classifier == FlipClassifier.NONE or baseline_is_weak(campaign):
        return 0.0
    return campaign.flip_weight


def baseline_check_note(campaign: Campaign) -> tuple[str, bool] | None:
    """What the review page says of the built-in baseline's last check, and whether it is
    a warning (no better than the most common label); None where the baseline is not the
    campaign's classifier or was never checked (`candidates_predict`)."""
    check = campaign.flip_classifier_check or {}
    if campaign.flip_classifier != FlipClassifier.BASELINE or not check.get("of"):
        return None
    right, of, majority = check["right"], check["of"], check["majority"]
    note = (
        f"The built-in classifier gives {right} of {counted(of, 'original')} "
        f"({right / of:.0%}) their label when it has not learned from them; the most "
        f"common label alone is right on {majority} ({majority / of:.0%})."
    )
    if not baseline_is_weak(campaign):
        return note, False
    return note + (
        " Its predicted flips say nothing yet, so selection leaves them out and picks for "
        "diversity alone until it does better: add originals, label counterfactuals (gold "
        "rounds), upload your own predictions, or name a classifier model in Settings → "
        "Selection."
    ), True


def label_classifier(campaign: Campaign):
    """The campaign's classifier, ready to predict; None where it computes nothing (none,
    uploaded) or the baseline has fewer than two labels among the texts it learns from.
    A model directory that cannot be loaded is InvalidInput naming `flip_model`; one whose
    labels are not the campaign's (after `flip_label_map`), naming `flip_label_map`.

    The baseline returned here has seen every original: candidates are predicted out of
    fold instead (`candidates_predict`)."""
    from generation.label_classifiers import fit_baseline

    labels = tuple(campaign.labels.values_list("value", flat=True))
    if campaign.flip_classifier == FlipClassifier.BASELINE:
        rows = _baseline_rows(campaign)
        if rows is None:
            return None
        return fit_baseline(
            rows, pair_task=campaign.is_pair_task, sentiment_lexicon=_uses_lexicon(campaign)
        )
    if campaign.flip_classifier == FlipClassifier.MODEL:
        label_map = tuple(sorted((campaign.flip_label_map or {}).items()))
        try:
            classifier = _model_classifier(campaign.flip_model, label_map)
        except ValueError as error:
            raise InvalidInput(
                f"The classifier cannot be loaded: {error}", fields={"flip_model": [str(error)]}
            ) from None
        _model_labels_check(classifier, labels)
        return classifier
    return None


# Candidates predicted and stored together: memory stays flat whatever the campaign's
# size. A multiple of a model's batch (32), so that the model sees the batches one call
# over every candidate would give it, and predicts exactly what that call would.
PREDICTION_PAGE = 4096
# Originals whose unpredicted candidates one query reads (`candidates_predict` of a
# queryset): the candidates are predicted in (original, id) order, a range at a time.
ORIGINALS_PER_READ = 1000
_PREDICTION_FIELDS = ("predicted_label", "predicted_confidence", "prediction_source")


class _Unpredicted(NamedTuple):
    """What a classifier reads of a candidate."""

    pk: int
    text: str
    context: str  # its original's (pair tasks; "" otherwise)
    original_id: int
    candidate: Candidate | None = None  # the object given, to set its prediction on


@dataclass(frozen=True)
class _Predictor:
    """The campaign's classifier, made ready once for any number of candidates."""

    source: str  # what `prediction_source` says of its predictions
    # (texts, contexts or None, groups: the originals' ids) -> a prediction or None each
    predict: Callable[[list[str], list[str] | None, list[str]], list]
    batch_size: int = 1  # a model's batch: pages are a multiple of it


def _predictor(campaign: Campaign) -> _Predictor | None:
    """The campaign's classifier ready to predict candidates; None where it predicts
    nothing. The built-in baseline's out-of-fold check is stored on the campaign here
    (`baseline_check_note`); a model that cannot be used is InvalidInput
    (`label_classifier`)."""
    from generation.label_classifiers import BASELINE, check_out_of_fold, predict_out_of_fold

    if campaign.flip_classifier == FlipClassifier.BASELINE:
        training = _baseline_rows(campaign)
        if training is None:
            return None
        # One tuple for every page: the fold models are cached by it (fitted once), and
        # the cache compares a tuple with itself at no cost.
        training = tuple(training)
        lexicon = _uses_lexicon(campaign)
        check = check_out_of_fold(
            training, pair_task=campaign.is_pair_task, sentiment_lexicon=lexicon
        )
        campaign.flip_classifier_check = (
            {"right": check.right, "of": check.of, "majority": check.majority} if check else {}
        )
        Campaign.objects.filter(pk=campaign.pk).update(
            flip_classifier_check=campaign.flip_classifier_check
        )
        return _Predictor(
            BASELINE, functools.partial(predict_out_of_fold, training, sentiment_lexicon=lexicon)
        )
    classifier = label_classifier(campaign)
    if classifier is None:
        return None
    return _Predictor(
        classifier.source,
        lambda texts, contexts, groups: classifier.predict(texts, contexts),
        getattr(classifier, "batch_size", 1),
    )


def candidates_predict(
    *, campaign: Campaign, candidates: Sequence[Candidate] | QuerySet | None = None
) -> int:
    """Predict the label of `candidates` (default: the campaign's that have no prediction)
    with the campaign's classifier and store it. Returns how many were predicted.

    `candidates` are Candidate objects (given their prediction in place too), or a
    queryset, read a range of originals at a time. Either way they are predicted and
    stored a page at a time, in one UPDATE a page (`core.bulk.rows_update`).

    The built-in baseline predicts each candidate with a model fitted without the
    candidate's original and its labeled counterfactuals
    (`generation.label_classifiers.predict_out_of_fold`): fitted with them, it gives a
    near-copy of x x's label back, and no edit ever looks like a flip.
    Uploaded predictions are never overwritten by a computed one.
    """
    if campaign.flip_classifier in (FlipClassifier.NONE, FlipClassifier.UPLOADED):
        return 0
    if candidates is None:
        candidates = Candidate.objects.filter(campaign=campaign, prediction_source="")
    if isinstance(candidates, QuerySet):
        rows = _unpredicted_rows(
            candidates.exclude(prediction_source=FlipClassifier.UPLOADED), campaign.is_pair_task
        )
    else:
        rows = (
            _Unpredicted(
                c.pk, c.text, c.original.context if campaign.is_pair_task else "", c.original_id, c
            )
            for c in candidates
            if c.prediction_source != FlipClassifier.UPLOADED
        )
    first = next(rows, None)
    if first is None:
        return 0
    predictor = _predictor(campaign)
    if predictor is None:
        return 0
    labels = {label.value: label for label in campaign.labels.all()}
    page_size = max(1, PREDICTION_PAGE // predictor.batch_size) * predictor.batch_size
    predicted = 0
    for page in batches(itertools.chain([first], rows), page_size):
        predictions = predictor.predict(
            [row.text for row in page],
            [row.context for row in page] if campaign.is_pair_task else None,
            [str(row.original_id) for row in page],
        )
        stored = [
            (row, labels[prediction.label], min(1.0, max(0.0, prediction.confidence)))
            for row, prediction in zip(page, predictions, strict=True)
            if prediction is not None
        ]
        rows_update(
            Candidate,
            _PREDICTION_FIELDS,
            [(row.pk, label.pk, confidence, predictor.source) for row, label, confidence in stored],
        )
        for row, label, confidence in stored:
            if row.candidate is not None:
                row.candidate.predicted_label = label
                row.candidate.predicted_confidence = confidence
                row.candidate.prediction_source = predictor.source
        predicted += len(stored)
    return predicted


def _unpredicted_rows(queryset: QuerySet, pair_task: bool) -> Iterator[_Unpredicted]:
    """The candidates of `queryset` in (original, id) order, read ORIGINALS_PER_READ
    originals at a time."""
    context = ("original__context",) if pair_task else ()
    for first, last in key_ranges(queryset, "original_id", ORIGINALS_PER_READ):
        chunk = queryset.filter(original_id__gte=first, original_id__lte=last).order_by(
            "original_id", "id"
        )
        for pk, text, original_id, *pair in chunk.values_list(
            "pk", "text", "original_id", *context
        ):
            yield _Unpredicted(pk, text, pair[0] if pair else "", original_id)


def candidate_predictions_upload(*, campaign: Campaign, file_name: str, content: bytes) -> int:
    """Store a researcher's predictions for the campaign's candidates: all rows or none.

    A CSV or JSONL file with `id` (the candidate's id, as the API and exports give it),
    `label` and optionally `confidence` (0 to 1; default 1). Every bad row is reported
    at once (InvalidInput, one entry per row). Returns the number of candidates updated.
    """
    from generation.label_classifiers import uploaded_predictions

    table = tabular.table_read(
        file_name=file_name,
        content=content,
        max_bytes=MAX_PREDICTION_BYTES,
        max_rows=MAX_PREDICTION_ROWS,
        check_header=PREDICTION_COLUMN_NAMES.check_header,
    )
    labels = {label.value: label for label in campaign.labels.all()}
    ids = [
        str(pk) for pk in Candidate.objects.filter(campaign=campaign).values_list("pk", flat=True)
    ]
    rows, named_twice = PREDICTION_COLUMN_NAMES.canonical_rows(table.rows)
    predictions, problems = uploaded_predictions(
        [row.values for row in rows], list(labels), ids, [row.where for row in rows]
    )
    errors = {**table.errors, **named_twice, **problems}
    if errors:
        raise rows_invalid(errors, nothing="no prediction was stored")
    if not predictions:
        raise InvalidInput("The file has no predictions.", fields={"file": ["No rows."]})
    candidates = list(Candidate.objects.filter(campaign=campaign, pk__in=list(predictions)))
    for candidate in candidates:
        prediction = predictions[str(candidate.pk)]
        candidate.predicted_label = labels[prediction.label]
        candidate.predicted_confidence = prediction.confidence
        candidate.prediction_source = FlipClassifier.UPLOADED
    rows_update(  # one transaction, all rows or none
        Candidate,
        _PREDICTION_FIELDS,
        [
            (c.pk, c.predicted_label.pk, c.predicted_confidence, c.prediction_source)
            for c in candidates
        ],
    )
    logger.info("campaign %s: %s uploaded", campaign.pk, counted(len(candidates), "prediction"))
    return len(candidates)
