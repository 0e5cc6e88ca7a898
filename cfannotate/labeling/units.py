"""Labeling units from generated candidates: the diverse few per original (Polyjuice §4.1).

Per original, the fluent candidates (not `global` rewrites) are ranked by
`generation.selection` (facility location on 1 - D_L with the campaign's weights, ties
to the more fluent) and the chosen ones are grouped into units of three, the size of a
round.
"""

from dataclasses import dataclass

from django.db import transaction

from cfannotate.campaigns.models import Campaign
from cfannotate.candidates.models import Candidate, CandidateSource, CandidateStatus, ControlCode
from cfannotate.labeling.models import GoldRound, LabelingUnit, UnitItem

ROUND_SIZE = 3  # counterfactuals shown per round (Polyjuice §4.2)


@dataclass(frozen=True)
class SelectionSummary:
    originals: int
    units: int
    candidates: int


def distance_weights(campaign: Campaign):
    """The campaign's weights of the relationship distance D_L."""
    from generation.selection import DistanceWeights

    return DistanceWeights(
        base=campaign.weight_base,
        removed=campaign.weight_removed,
        added=campaign.weight_added,
        tree=campaign.weight_tree,
        code=campaign.weight_code,
    )


def units_create_from_selection(*, campaign: Campaign) -> SelectionSummary:
    """Select and create units for every original that has fluent candidates and no unit yet.

    Safe to run again: originals that already have units are skipped, and a candidate
    can sit in one unit only (database constraint).
    """
    from generation.relationship import Relationship
    from generation.selection import select_diverse_many

    done = set(LabelingUnit.objects.filter(campaign=campaign).values_list("original_id", flat=True))
    pool = list(
        Candidate.objects.filter(campaign=campaign, status=CandidateStatus.GENERATED)
        .exclude(original_id__in=done)
        # Originals of gold rounds stay out of real rounds, so gold cannot be recognised.
        .exclude(original_id__in=GoldRound.objects.filter(campaign=campaign).values("original_id"))
        # Generated `global` edits are rewrites too far from x to be counterfactuals (A.2);
        # a researcher's imported candidates are labeled whatever their edit.
        .exclude(control_code=ControlCode.GLOBAL, source=CandidateSource.GENERATED)
        .select_related("original")
        .order_by("original_id", "id")
    )
    if not pool:
        return SelectionSummary(originals=0, units=0, candidates=0)
    relationships = [Relationship.from_dict(candidate.edit["relationship"]) for candidate in pool]
    fluency = [
        candidate.fluency_full if candidate.fluency_full is not None else 0.0 for candidate in pool
    ]
    chosen = select_diverse_many(
        relationships,
        campaign.selected_per_original,
        weights=distance_weights(campaign),
        fluency=fluency,
        groups=[str(candidate.original_id) for candidate in pool],
    )
    units = items = 0
    with transaction.atomic():
        for indices in chosen.values():
            picked = [pool[index] for index in indices]
            for start in range(0, len(picked), ROUND_SIZE):
                group = picked[start : start + ROUND_SIZE]
                unit = LabelingUnit.objects.create(
                    campaign=campaign,
                    original=group[0].original,
                    judgments_needed=campaign.judgments_per_candidate,
                    priority=group[0].original.priority,
                )
                UnitItem.objects.bulk_create(
                    UnitItem(unit=unit, candidate=candidate, position=position)
                    for position, candidate in enumerate(group)
                )
                units += 1
                items += len(group)
            Candidate.objects.filter(pk__in=[c.pk for c in picked]).update(
                status=CandidateStatus.SELECTED
            )
    return SelectionSummary(originals=len(chosen), units=units, candidates=items)
