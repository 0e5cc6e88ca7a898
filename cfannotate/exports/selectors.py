"""The rows of each export, read in chunks so that a campaign of any size streams in flat memory.

Contrast set (Polyjuice §4.3): kept counterfactuals whose kept label differs from the
original's. Augmentation set (§4.4): for every original with at least one such label
flip, the original itself and all its kept counterfactuals (kept implies valid).
Raw judgments: every submitted judgment of real rounds, and of gold rounds on request.
All candidates: each candidate's id and text, for the researcher's own predictions.

Every row of a kind has the same keys; a value that does not apply is None. `engine` and
`model` say where a generated candidate came from (recorded by `generation.polyjuice`).
"""

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import Count, Exists, F, Max, OuterRef, Q, QuerySet, Subquery

from cfannotate.campaigns.models import Campaign
from cfannotate.candidates.selectors import candidate_texts
from cfannotate.labeling.models import Judgment, RoundKind
from cfannotate.quality.models import AggregatedLabel, WorkerQuality

# Rows fetched per database round trip; also what one chunk of a server-side cursor holds.
CHUNK_SIZE = 2000

Row = dict[str, Any]

COUNTERFACTUAL_COLUMNS = (
    "original_id",
    "candidate_id",
    "context",
    "original_text",
    "text",
    "original_label",
    "label",
    "generator",
    "engine",
    "model",
    "control_code",
    "removed_tokens",
    "added_tokens",
    "votes",
    "qualified_votes",
    # The qualified votes themselves: per label value, and how many judged it valid.
    "label_votes",
    "valid_votes",
    "agreement",
    # The classifier in the loop's label for the counterfactual (Campaign.flip_classifier).
    "predicted_label",
    "predicted_confidence",
)
AUGMENTATION_COLUMNS = (
    *COUNTERFACTUAL_COLUMNS[:2],
    "is_original",
    "flips_label",
    *COUNTERFACTUAL_COLUMNS[2:],
)
JUDGMENT_COLUMNS = (
    "judgment_id",
    "round_kind",
    "assignment_id",
    "worker_id",
    "worker_platform",
    "worker_qualified",
    "round_seconds",
    "served_at",
    "submitted_at",
    "original_id",
    "candidate_id",
    "context",
    "original_text",
    "text",
    "original_label",
    "is_valid",
    "label",
    "expected_valid",
    "expected_label",
    "kept",
    "kept_label",
    "generator",
    "engine",
    "model",
    "control_code",
    "removed_tokens",
    "added_tokens",
    "votes",
    "qualified_votes",
    "agreement",
)
# Named as a predictions file names them, so the file comes back with a label column added.
CANDIDATE_COLUMNS = ("id", "text", "original_id")

# What a counterfactual row reads, relative to AggregatedLabel.
_AGGREGATE_VALUES = (
    "candidate_id",
    "candidate__text",
    "candidate__generator",
    "candidate__metadata__engine",
    "candidate__metadata__model",
    "candidate__control_code",
    "candidate__edit",
    "candidate__original_id",
    "candidate__original__external_id",
    "candidate__original__text",
    "candidate__original__context",
    "candidate__original__label__value",
    "label__value",
    "votes",
    "qualified_votes",
    "label_votes",
    "valid_votes",
    "agreement",
    "candidate__predicted_label__value",
    "candidate__predicted_confidence",
)


def edit_tokens(edit: object, side: str) -> str:
    """The words an edit `side` ("removed" or "added"), space-separated, in edit order.

    Reads the ops of `generation.edits.Edit.to_dict()`; an op stored before tokens were
    recorded falls back to its phrase text. Anything else (an empty or foreign edit) has none.
    """
    ops = edit.get("ops") if isinstance(edit, dict) else None
    words: list[str] = []
    for op in ops if isinstance(ops, list) else []:
        if not isinstance(op, dict):
            continue
        tokens = op.get(f"{side}_tokens")
        if not isinstance(tokens, list):
            tokens = str(op.get(side) or "").split()
        words.extend(str(token) for token in tokens)
    return " ".join(words)


def _provenance(values: dict) -> Row:
    """Which engine and model made the candidate (generated ones record both); else None."""
    return {
        "engine": _text_or_none(values["candidate__metadata__engine"]),
        "model": _text_or_none(values["candidate__metadata__model"]),
    }


def _text_or_none(value: object) -> str | None:
    # Metadata is free-form JSON (an import may carry anything): only text is provenance.
    return value if isinstance(value, str) else None


def _finite(value: float | None) -> float | None:
    # JSON has no NaN; a vote share that is not a number is no vote share.
    return value if value is not None and math.isfinite(value) else None


def _counterfactual_row(values: dict) -> Row:
    edit = values["candidate__edit"]
    return {
        "original_id": values["candidate__original__external_id"],
        "candidate_id": values["candidate_id"],
        "context": values["candidate__original__context"],
        "original_text": values["candidate__original__text"],
        "text": values["candidate__text"],
        "original_label": values["candidate__original__label__value"],
        "label": values["label__value"],
        "generator": values["candidate__generator"],
        **_provenance(values),
        "control_code": values["candidate__control_code"],
        "removed_tokens": edit_tokens(edit, "removed"),
        "added_tokens": edit_tokens(edit, "added"),
        "votes": values["votes"],
        "qualified_votes": values["qualified_votes"],
        "label_votes": values["label_votes"],
        "valid_votes": values["valid_votes"],
        "agreement": _finite(values["agreement"]),
        "predicted_label": values["candidate__predicted_label__value"],
        "predicted_confidence": _finite(values["candidate__predicted_confidence"]),
    }


def _kept_aggregates(campaign: Campaign) -> QuerySet[AggregatedLabel]:
    return AggregatedLabel.objects.filter(candidate__campaign=campaign, kept=True)


def _flipping(aggregates: QuerySet[AggregatedLabel]) -> QuerySet[AggregatedLabel]:
    return aggregates.exclude(label_id=F("candidate__original__label_id"))


def contrast_rows(campaign: Campaign) -> Iterator[Row]:
    """Kept counterfactuals whose kept label differs from their original's (§4.3)."""
    aggregates = (
        _flipping(_kept_aggregates(campaign))
        .order_by("candidate__original_id", "candidate_id")
        .values(*_AGGREGATE_VALUES)
    )
    for values in aggregates.iterator(chunk_size=CHUNK_SIZE):
        yield _counterfactual_row(values)


def augmentation_rows(campaign: Campaign) -> Iterator[Row]:
    """Each original with a kept label flip, then all its kept counterfactuals (§4.4)."""
    flips_of_the_same_original = _flipping(_kept_aggregates(campaign)).filter(
        candidate__original_id=OuterRef("candidate__original_id")
    )
    aggregates = (
        _kept_aggregates(campaign)
        .filter(Exists(flips_of_the_same_original))
        .order_by("candidate__original_id", "candidate_id")
        .values(*_AGGREGATE_VALUES)
    )
    current_original = None
    for values in aggregates.iterator(chunk_size=CHUNK_SIZE):
        row = _counterfactual_row(values)
        if values["candidate__original_id"] != current_original:
            current_original = values["candidate__original_id"]
            yield _original_row(row)
        flips_label = row["label"] != row["original_label"]
        yield _in_order(
            {**row, "is_original": False, "flips_label": flips_label}, AUGMENTATION_COLUMNS
        )


@dataclass(frozen=True)
class ExportSizes:
    """What each export holds now, for the exports page (three queries: the labels, the
    judgments, the candidates)."""

    kept: int  # counterfactuals with a kept label
    contrast: int  # of those, label flips: the contrast set's rows
    augmentation_originals: int  # originals with a kept flip
    augmentation_counterfactuals: int  # all kept counterfactuals of those originals
    labels_updated_at: datetime | None  # when quality control last wrote the labels
    judgments: int  # submitted judgments of real rounds
    candidates: int

    @property
    def augmentation(self) -> int:
        """The augmentation set's rows: each original, then its kept counterfactuals."""
        return self.augmentation_originals + self.augmentation_counterfactuals

    def rows(self, kind: str) -> int:
        """The rows of the export named `kind` (a key of EXPORT_KINDS)."""
        return {
            "contrast": self.contrast,
            "augmentation": self.augmentation,
            "judgments": self.judgments,
            "candidates": self.candidates,
        }[kind]


def export_sizes(campaign: Campaign) -> ExportSizes:
    """The row counts of each export, counted as the exports select them."""
    aggregates = AggregatedLabel.objects.filter(candidate__campaign=campaign)
    flip = Q(kept=True) & ~Q(label_id=F("candidate__original__label_id"))
    flips_of_the_same_original = _flipping(_kept_aggregates(campaign)).filter(
        candidate__original_id=OuterRef("candidate__original_id")
    )
    labels = aggregates.annotate(original_flips=Exists(flips_of_the_same_original)).aggregate(
        kept_count=Count("id", filter=Q(kept=True)),
        flips=Count("id", filter=flip),
        flip_originals=Count("candidate__original_id", filter=flip, distinct=True),
        flip_originals_kept=Count("id", filter=Q(kept=True, original_flips=True)),
        last_updated=Max("updated_at"),
    )
    judgments = Judgment.objects.filter(
        round__assignment__campaign=campaign,
        round__submitted_at__isnull=False,
        round__kind=RoundKind.REAL,
    ).count()
    return ExportSizes(
        kept=labels["kept_count"],
        contrast=labels["flips"],
        augmentation_originals=labels["flip_originals"],
        augmentation_counterfactuals=labels["flip_originals_kept"],
        labels_updated_at=labels["last_updated"],
        judgments=judgments,
        candidates=campaign.candidates.count(),
    )


def _in_order(row: Row, columns: tuple[str, ...]) -> Row:
    return {column: row[column] for column in columns}


def _original_row(counterfactual: Row) -> Row:
    """The original x as a training row, built from one of its counterfactuals' rows."""
    return {
        "original_id": counterfactual["original_id"],
        "candidate_id": None,
        "is_original": True,
        "flips_label": False,
        "context": counterfactual["context"],
        "original_text": counterfactual["original_text"],
        "text": counterfactual["original_text"],
        "original_label": counterfactual["original_label"],
        "label": counterfactual["original_label"],
        "generator": "",
        "engine": None,
        "model": None,
        "control_code": "",
        "removed_tokens": "",
        "added_tokens": "",
        "votes": None,
        "qualified_votes": None,
        "label_votes": None,
        "valid_votes": None,
        "agreement": None,
        "predicted_label": None,
        "predicted_confidence": None,
    }


def judgment_rows(campaign: Campaign, *, include_gold: bool = False) -> Iterator[Row]:
    """Every submitted judgment of real rounds, oldest round first; with `include_gold`,
    of the hidden gold and the training rounds too (`round_kind` tells them apart)."""
    kinds = [RoundKind.REAL]
    if include_gold:
        kinds += [RoundKind.GOLD, RoundKind.TRAINING]
    worker_qualified = WorkerQuality.objects.filter(
        campaign=campaign, worker_id=OuterRef("round__worker_id")
    ).values("qualified")[:1]
    judgments = (
        Judgment.objects.filter(
            round__assignment__campaign=campaign,
            round__submitted_at__isnull=False,
            round__kind__in=kinds,
        )
        .annotate(worker_qualified=Subquery(worker_qualified))
        .order_by("round__submitted_at", "round_id", "id")
        .values(
            "id",
            "round__kind",
            "round__assignment_id",
            "round__worker__external_id",
            "round__worker__platform",
            "worker_qualified",
            "round__served_at",
            "round__submitted_at",
            "is_valid",
            "label__value",
            "candidate_id",
            "candidate__text",
            "candidate__generator",
            "candidate__metadata__engine",
            "candidate__metadata__model",
            "candidate__control_code",
            "candidate__edit",
            "candidate__original__external_id",
            "candidate__original__text",
            "candidate__original__context",
            "candidate__original__label__value",
            "candidate__gold_item__expected_valid",
            "candidate__gold_item__expected_label__value",
            "candidate__aggregated_label__kept",
            "candidate__aggregated_label__label__value",
            "candidate__aggregated_label__votes",
            "candidate__aggregated_label__qualified_votes",
            "candidate__aggregated_label__agreement",
        )
    )
    for values in judgments.iterator(chunk_size=CHUNK_SIZE):
        yield _judgment_row(values)


def _judgment_row(values: dict) -> Row:
    served_at, submitted_at = values["round__served_at"], values["round__submitted_at"]
    edit = values["candidate__edit"]
    kept = values["candidate__aggregated_label__kept"]
    return {
        "judgment_id": values["id"],
        "round_kind": values["round__kind"],
        "assignment_id": values["round__assignment_id"],
        "worker_id": values["round__worker__external_id"],
        "worker_platform": values["round__worker__platform"],
        "worker_qualified": values["worker_qualified"],
        "round_seconds": (submitted_at - served_at).total_seconds() if served_at else None,
        "served_at": served_at.isoformat() if served_at else None,
        "submitted_at": submitted_at.isoformat(),
        "original_id": values["candidate__original__external_id"],
        "candidate_id": values["candidate_id"],
        "context": values["candidate__original__context"],
        "original_text": values["candidate__original__text"],
        "text": values["candidate__text"],
        "original_label": values["candidate__original__label__value"],
        "is_valid": values["is_valid"],
        "label": values["label__value"],
        "expected_valid": values["candidate__gold_item__expected_valid"],
        "expected_label": values["candidate__gold_item__expected_label__value"],
        "kept": kept,
        "kept_label": values["candidate__aggregated_label__label__value"] if kept else None,
        "generator": values["candidate__generator"],
        **_provenance(values),
        "control_code": values["candidate__control_code"],
        "removed_tokens": edit_tokens(edit, "removed"),
        "added_tokens": edit_tokens(edit, "added"),
        "votes": values["candidate__aggregated_label__votes"],
        "qualified_votes": values["candidate__aggregated_label__qualified_votes"],
        "agreement": _finite(values["candidate__aggregated_label__agreement"]),
    }


def candidate_rows(campaign: Campaign) -> Iterator[Row]:
    """Every candidate, whatever its status: the ids a researcher's predictions file names
    (`candidates.predictions`), with the text to predict and its original's id."""
    for values in candidate_texts(campaign).iterator(chunk_size=CHUNK_SIZE):
        yield {
            "id": values["id"],
            "text": values["text"],
            "original_id": values["original__external_id"],
        }


@dataclass(frozen=True)
class ExportKind:
    name: str
    title: str
    columns: tuple[str, ...]
    rows: Callable[..., Iterator[Row]]
    takes_gold: bool = False


EXPORT_KINDS = {
    kind.name: kind
    for kind in (
        ExportKind("contrast", "Contrast set", COUNTERFACTUAL_COLUMNS, contrast_rows),
        ExportKind("augmentation", "Augmentation set", AUGMENTATION_COLUMNS, augmentation_rows),
        ExportKind("judgments", "Raw judgments", JUDGMENT_COLUMNS, judgment_rows, takes_gold=True),
        ExportKind("candidates", "All candidates", CANDIDATE_COLUMNS, candidate_rows),
    )
}
