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
from typing import NamedTuple

from django.db import connection, transaction
from django.db.models import Q

from cfannotate.campaigns.models import Campaign
from cfannotate.candidates.models import Candidate, CandidateSource, CandidateStatus, ControlCode
from cfannotate.candidates.predictions import candidates_predict, selection_flip_weight
from cfannotate.core.bulk import batches, key_ranges, parameters_per_statement
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


# Originals selected and stored together. Selection is per original, so the pool is read,
# selected and written a range of originals at a time: a few queries a range, and memory
# that stays flat whatever the campaign's size.
ORIGINALS_PER_CHUNK = 1000


class _PoolCandidate(NamedTuple):
    """What selection and a new unit read of a candidate of the pool."""

    pk: int
    original_id: int
    edit: dict
    fluency_full: float | None
    predicted_label: str | None  # the label's value
    predicted_confidence: float | None
    original_label: str
    intended_label: str | None
    original_priority: float


_POOL_FIELDS = (
    "pk",
    "original_id",
    "edit",
    "fluency_full",
    "predicted_label__value",
    "predicted_confidence",
    "original__label__value",
    "intended_label__value",
    "original__priority",
)


def _selection_pool(campaign: Campaign):
    """The candidates selection chooses from: generated, of originals with no unit yet and
    no gold round, not a generated `global` rewrite."""
    return (
        Candidate.objects.filter(campaign=campaign, status=CandidateStatus.GENERATED)
        .exclude(
            original_id__in=LabelingUnit.objects.filter(campaign=campaign).values("original_id")
        )
        # Originals of gold rounds stay out of real rounds, so gold cannot be recognised.
        .exclude(original_id__in=GoldRound.objects.filter(campaign=campaign).values("original_id"))
        # Generated `global` edits are rewrites too far from x to be counterfactuals (A.2);
        # a researcher's imported candidates are labeled whatever their edit.
        .exclude(control_code=ControlCode.GLOBAL, source=CandidateSource.GENERATED)
    )


def units_create_from_selection(*, campaign: Campaign) -> SelectionSummary:
    """Select and create units for every original that has fluent candidates and no unit yet.

    Safe to run again: originals that already have units are skipped, and a candidate
    can sit in one unit only (database constraint). The candidates without a prediction
    are predicted first (`candidates_predict`); then each range of ORIGINALS_PER_CHUNK
    originals is selected and its units stored in a transaction of its own, so a run cut
    short leaves whole originals done and the next run does the rest.
    """
    from generation.relationship import Relationship
    from generation.selection import select_diverse_many

    pool = _selection_pool(campaign)
    chunks = list(key_ranges(pool, "original_id", ORIGINALS_PER_CHUNK))
    if not chunks:
        return SelectionSummary(originals=0, units=0, candidates=0)
    try:
        candidates_predict(campaign=campaign, candidates=pool.filter(prediction_source=""))
    except InvalidInput as error:  # selection goes on, for diversity alone where unknown
        logger.warning("campaign %s: no predicted labels: %s", campaign.pk, error)
    weights, flip_weight = distance_weights(campaign), selection_flip_weight(campaign)
    originals = units = items = 0
    for first, last in chunks:
        chunk = pool.filter(original_id__gte=first, original_id__lte=last).order_by(
            "original_id", "id"
        )
        candidates = [_PoolCandidate(*row) for row in chunk.values_list(*_POOL_FIELDS)]
        chosen = select_diverse_many(
            [Relationship.from_dict(candidate.edit["relationship"]) for candidate in candidates],
            campaign.selected_per_original,
            weights=weights,
            fluency=[c.fluency_full if c.fluency_full is not None else 0.0 for c in candidates],
            groups=[str(candidate.original_id) for candidate in candidates],
            flip=flip_scores_of(candidates),
            flip_weight=flip_weight,
        )
        picked = [[candidates[index] for index in indices] for indices in chosen.values()]
        with transaction.atomic():
            units += _units_create(campaign, picked)
        originals += len(chosen)
        items += sum(map(len, picked))
    return SelectionSummary(originals=originals, units=units, candidates=items)


def flip_scores_of(candidates: list[_PoolCandidate]) -> list[float]:
    """Each candidate's predicted chance of reaching its intended label (else of leaving
    its original's), from its stored prediction; 0 without one."""
    from generation.label_classifiers import LabelPrediction, flip_scores

    predictions = [
        LabelPrediction(c.predicted_label, c.predicted_confidence or 0.0)
        if c.predicted_label is not None
        else None
        for c in candidates
    ]
    return flip_scores(
        predictions,
        [c.original_label for c in candidates],
        [c.intended_label for c in candidates],
    )


def _units_create(campaign: Campaign, picked: list[list[_PoolCandidate]]) -> int:
    """Units of each original's picked candidates, ROUND_SIZE at a time in the given
    order, and the candidates marked selected; returns the units created. A few queries
    whatever their number (the originals' order is the units' id order)."""
    groups = [
        candidates[start : start + ROUND_SIZE]
        for candidates in picked
        for start in range(0, len(candidates), ROUND_SIZE)
    ]
    units = [
        LabelingUnit(
            campaign=campaign,
            original_id=group[0].original_id,
            judgments_needed=campaign.judgments_per_candidate,
            priority=group[0].original_priority,
        )
        for group in groups
    ]
    if connection.features.can_return_rows_from_bulk_insert:
        LabelingUnit.objects.bulk_create(units)
    else:  # SQLite before 3.35 gives no ids back from a bulk insert
        for unit in units:
            unit.save()
    UnitItem.objects.bulk_create(
        UnitItem(unit=unit, candidate_id=candidate.pk, position=position)
        for unit, group in zip(units, groups, strict=True)
        for position, candidate in enumerate(group)
    )
    selected = [candidate.pk for group in groups for candidate in group]
    for ids in batches(selected, parameters_per_statement()):
        Candidate.objects.filter(pk__in=ids).update(status=CandidateStatus.SELECTED)
    return len(units)


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
