"""Labeling units from generated candidates: the diverse few per original (Polyjuice §4.1).

Per original, the fluent candidates (not `global` rewrites) are ranked by
`generation.selection` (facility location on 1 - D_L with the campaign's weights, ties
to the more fluent; predicted flips weighed in by `Campaign.flip_weight` where the
campaign has a classifier in the loop that does better than the most common label,
`candidates.predictions.selection_flip_weight`) and the chosen ones are grouped into
units of three, the size of a round.
"""

import logging
from dataclasses import dataclass

from django.db import transaction
from django.db.models import Q

from cfannotate.campaigns.models import Campaign
from cfannotate.candidates.models import Candidate, CandidateSource, CandidateStatus, ControlCode
from cfannotate.candidates.predictions import candidates_predict, selection_flip_weight
from cfannotate.core.exceptions import Conflict, InvalidInput
from cfannotate.labeling.models import GoldRound, LabelingUnit, Round, UnitItem

logger = logging.getLogger(__name__)

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
        .select_related("original__label", "predicted_label", "intended_label")
        .order_by("original_id", "id")
    )
    if not pool:
        return SelectionSummary(originals=0, units=0, candidates=0)
    try:
        candidates_predict(
            campaign=campaign, candidates=[c for c in pool if not c.prediction_source]
        )
    except InvalidInput as error:  # selection goes on, for diversity alone where unknown
        logger.warning("campaign %s: no predicted labels: %s", campaign.pk, error)
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
        flip=flip_scores_of(pool),
        flip_weight=selection_flip_weight(campaign),
    )
    units = items = 0
    with transaction.atomic():
        for indices in chosen.values():
            picked = [pool[index] for index in indices]
            for start in range(0, len(picked), ROUND_SIZE):
                group = picked[start : start + ROUND_SIZE]
                _unit_create(campaign, group)
                units += 1
                items += len(group)
            Candidate.objects.filter(pk__in=[c.pk for c in picked]).update(
                status=CandidateStatus.SELECTED
            )
    return SelectionSummary(originals=len(chosen), units=units, candidates=items)


def flip_scores_of(candidates: list[Candidate]) -> list[float]:
    """Each candidate's predicted chance of reaching its intended label (else of leaving
    its original's), from its stored prediction; 0 without one."""
    from generation.label_classifiers import LabelPrediction, flip_scores

    predictions = [
        LabelPrediction(c.predicted_label.value, c.predicted_confidence or 0.0)
        if c.predicted_label is not None
        else None
        for c in candidates
    ]
    return flip_scores(
        predictions,
        [c.original.label.value for c in candidates],
        [c.intended_label.value if c.intended_label else None for c in candidates],
    )


def _unit_create(campaign: Campaign, candidates: list[Candidate]) -> LabelingUnit:
    """One unit of an original's candidates (at most ROUND_SIZE), in the given order."""
    unit = LabelingUnit.objects.create(
        campaign=campaign,
        original=candidates[0].original,
        judgments_needed=campaign.judgments_per_candidate,
        priority=candidates[0].original.priority,
    )
    UnitItem.objects.bulk_create(
        UnitItem(unit=unit, candidate=candidate, position=position)
        for position, candidate in enumerate(candidates)
    )
    return unit


def unit_is_claimed(unit: LabelingUnit) -> bool:
    """Whether any worker holds or held the unit: its items are then what they saw."""
    return unit.claims > 0 or Round.objects.filter(unit=unit).exists()


def units_lock_unclaimed(queryset) -> list[LabelingUnit]:
    """Lock the units of `queryset` and return the unclaimed ones (inside a transaction).

    The row lock makes a concurrent `units_claim` wait for our change, so a worker
    never claims a unit whose items are being changed.
    """
    locked = list(queryset.select_for_update().order_by("id"))
    return [unit for unit in locked if not unit_is_claimed(unit)]


def units_place_candidates(*, campaign: Campaign, candidates: list[Candidate]) -> int:
    """Put researcher-chosen candidates into labeling units; returns the units created.

    A candidate joins an unclaimed unit of its original that has room (fewer than
    ROUND_SIZE items); otherwise it starts a new unit, so claimed units never change
    under a worker. Must run inside a transaction; callers check that the candidates
    may be labeled (not gold, not already in a unit).
    """
    created = 0
    for candidate in candidates:
        units = LabelingUnit.objects.filter(campaign=campaign, original=candidate.original_id)
        open_unit = next(
            (unit for unit in units_lock_unclaimed(units) if unit.items.count() < ROUND_SIZE),
            None,
        )
        if open_unit is None:
            _unit_create(campaign, [candidate])
            created += 1
            continue
        last = open_unit.items.order_by("-position").values_list("position", flat=True).first()
        UnitItem.objects.create(unit=open_unit, candidate=candidate, position=last + 1)
    return created


ORIGINAL_GIVEN_OUT = (
    "Workers were already given a labeling unit of this original, so it cannot carry a "
    "gold or training round: workers would recognise it. Choose another original."
)


def original_units_withdraw(*, campaign: Campaign, original) -> int:
    """Take an original out of labeling, for a gold or training round on it; returns the
    candidates freed (back to generated, so the review page can still show them).

    A gold round's original stays out of real rounds, so nothing about it gives the round
    away. Refused (Conflict) when a worker was given any unit of it. Must run inside a
    transaction; the units are locked first, so no worker claims one meanwhile.
    """
    original_units = LabelingUnit.objects.filter(campaign=campaign, original=original)
    unclaimed = units_lock_unclaimed(original_units)
    if len(unclaimed) != original_units.count():
        raise Conflict(ORIGINAL_GIVEN_OUT, fields={"original": ["Given to workers."]})
    freed = list(Candidate.objects.filter(unit_item__unit__in=unclaimed))
    units_remove_candidates(candidates=freed)
    Candidate.objects.filter(pk__in=[candidate.pk for candidate in freed]).update(
        status=CandidateStatus.GENERATED
    )
    return len(freed)


def units_given_out(units):
    """Those of `units` a worker holds or held (the queryset form of `unit_is_claimed`)."""
    return units.filter(Q(claims__gt=0) | Q(rounds__isnull=False))


def originals_given_out(originals) -> set[int]:
    """The ids of those originals a worker holds or held a labeling unit of."""
    given = units_given_out(LabelingUnit.objects.filter(original__in=originals))
    return set(given.values_list("original_id", flat=True))


def units_remove_candidates(*, candidates: list[Candidate]) -> int:
    """Take candidates out of their (unclaimed) units; units left empty are deleted.

    Must run inside a transaction; callers refuse candidates of claimed units first.
    Returns the number of units deleted.
    """
    unit_ids = set(
        UnitItem.objects.filter(candidate__in=candidates).values_list("unit_id", flat=True)
    )
    UnitItem.objects.filter(candidate__in=candidates).delete()
    _, deleted = LabelingUnit.objects.filter(id__in=unit_ids, items__isnull=True).delete()
    return deleted.get(LabelingUnit._meta.label, 0)
