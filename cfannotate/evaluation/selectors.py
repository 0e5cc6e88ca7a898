"""Reads for evaluation: a campaign's originals and kept counterfactuals as records; past runs.

The counterfactuals come from the export rows (`cfannotate.exports.selectors`), so the
evaluation sees exactly the contrast and augmentation sets a researcher downloads.
"""

from dataclasses import dataclass

from django.db.models import QuerySet

from cfannotate.campaigns.models import Campaign
from cfannotate.campaigns.selectors import originals_of
from cfannotate.core.exceptions import NotFound
from cfannotate.evaluation.models import Evaluation, EvaluationKind
from cfannotate.exports.selectors import augmentation_rows, contrast_rows
from generation.evaluation import LabeledCounterfactual
from generation.records import OriginalRecord


@dataclass(frozen=True)
class EvaluationData:
    originals: list[OriginalRecord]  # every original of the campaign, keyed by external id
    counterfactuals: list[LabeledCounterfactual]  # keyed by candidate id, as in the exports


def evaluation_data(campaign: Campaign, *, kind: str) -> EvaluationData:
    """Table 2 reads the contrast set; Table 3 the augmentation set (flips and x̂ beside them)."""
    originals = [
        OriginalRecord(key=o.external_id, text=o.text, label=o.label.value, context=o.context)
        for o in originals_of(campaign)
    ]
    if kind == EvaluationKind.TABLE2:
        rows = contrast_rows(campaign)
    else:
        rows = (row for row in augmentation_rows(campaign) if not row["is_original"])
    counterfactuals = [
        LabeledCounterfactual(
            key=str(row["candidate_id"]),
            original_key=row["original_id"],
            text=row["text"],
            label=row["label"],
        )
        for row in rows
    ]
    return EvaluationData(originals=originals, counterfactuals=counterfactuals)


def evaluations_for(campaign: Campaign, *, kind: str | None = None) -> QuerySet[Evaluation]:
    evaluations = Evaluation.objects.filter(campaign=campaign).select_related("created_by")
    return evaluations.filter(kind=kind) if kind else evaluations


def evaluation_get(*, campaign: Campaign, evaluation_id: int) -> Evaluation:
    evaluation = evaluations_for(campaign).filter(pk=evaluation_id).first()
    if evaluation is None:
        raise NotFound(f"No evaluation {evaluation_id} in this campaign.")
    return evaluation


def latest_evaluations(campaign: Campaign) -> dict[str, Evaluation | None]:
    """The newest run of each kind, for the page's tables and charts."""
    return {kind: evaluations_for(campaign, kind=kind).first() for kind in EvaluationKind.values}
