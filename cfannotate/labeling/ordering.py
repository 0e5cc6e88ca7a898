"""Which originals to label first under a budget (Polyjuice §4.1, corpus-level selection).

The same facility-location objective that picks three counterfactuals per original
(`generation.selection`) picks the `budget` originals whose selected counterfactuals
together cover the most diverse edits, each original weighted by its model-in-the-loop
priority when one is set (§4.4). Their open units then come first in the claiming
order (`-priority, id`), best first; the other units keep their original's priority.
Above `selection.ORIGINALS_EXACT_MAX` (2,896) open originals the greedy runs on random parts
of them, so that a large campaign is ordered within the request (generation/selection.md §5).
"""

from dataclasses import dataclass

from django.db import transaction
from django.db.models import Case, FloatField, OuterRef, Subquery, Value, When

from cfannotate.campaigns.models import Campaign, Original
from cfannotate.core.exceptions import InvalidInput
from cfannotate.labeling.models import LabelingUnit, UnitItem
from cfannotate.labeling.units import distance_weights

# Above any model priority (those are scores in [0, 2]), so the budget decides first.
BUDGET_PRIORITY_BASE = 1000.0
# Chosen originals per UPDATE: three parameters each, under SQLite's 999.
_RANK_BATCH = 300


@dataclass(frozen=True)
class OrderSummary:
    budget: int
    originals: int  # originals chosen (at most the budget)
    units: int  # open units moved to the front
    candidates_considered: int


def units_order_by_budget(*, campaign: Campaign, budget: int) -> OrderSummary:
    """Put the open units of the `budget` most diverse originals first; others follow."""
    from generation.relationship import Relationship
    from generation.selection import select_originals

    if not isinstance(budget, int) or isinstance(budget, bool) or budget < 1:
        raise InvalidInput(
            "The budget is the number of originals to label first: a whole number of 1 or more.",
            fields={"budget": ["A whole number of 1 or more."]},
        )
    # Only the three values selection reads, not the candidate and original rows.
    items = (
        UnitItem.objects.filter(unit__campaign=campaign, unit__claims=0)
        .order_by("unit__original_id", "unit_id", "position")
        .values_list(
            "unit__original_id", "candidate__edit__relationship", "unit__original__priority"
        )
    )
    relationships = []
    priority: dict[str, float] = {}
    for original_id, data, original_priority in items.iterator(chunk_size=2000):
        if not data:
            continue
        key = str(original_id)
        # Keyed by the unit's original, whatever the candidate's generator recorded.
        relationships.append(Relationship.from_dict(data | {"base": key}))
        priority[key] = max(original_priority, 0.0)
    if not relationships:
        raise InvalidInput(
            "No open unit has analysed counterfactuals to order: generate and select first, "
            "or wait until units are back in the pool."
        )
    chosen = [
        int(key)
        for key in select_originals(
            relationships, budget, priority=priority, weights=distance_weights(campaign)
        )
    ]
    moved = 0
    with transaction.atomic():
        open_units = LabelingUnit.objects.filter(campaign=campaign, claims=0)
        # Held until commit, as before: no claim takes an open unit while its order changes.
        list(open_units.select_for_update(of=("self",)).values_list("id", flat=True))
        # An earlier budget order is undone: its units go back to their original's priority.
        open_units.filter(priority__gte=BUDGET_PRIORITY_BASE).update(
            priority=Subquery(
                Original.objects.filter(pk=OuterRef("original_id")).values("priority")[:1]
            )
        )
        # The best first: each chosen original's open units get BASE + len(chosen) - rank,
        # a few hundred originals per UPDATE.
        for start in range(0, len(chosen), _RANK_BATCH):
            batch = chosen[start : start + _RANK_BATCH]
            ranks = [
                When(
                    original_id=original_id,
                    then=Value(BUDGET_PRIORITY_BASE + len(chosen) - start - offset),
                )
                for offset, original_id in enumerate(batch)
            ]
            moved += open_units.filter(original_id__in=batch).update(
                priority=Case(*ranks, output_field=FloatField())
            )
    return OrderSummary(
        budget=budget,
        originals=len(chosen),
        units=moved,
        candidates_considered=len(relationships),
    )
