"""Which originals to label first under a budget (Polyjuice §4.1, corpus-level selection).

The same facility-location objective that picks three counterfactuals per original
(`generation.selection`) picks the `budget` originals whose selected counterfactuals
together cover the most diverse edits, each original weighted by its model-in-the-loop
priority when one is set (§4.4). Their open units then come first in the claiming
order (`-priority, id`), best first; the other units keep their original's priority.
"""

from collections import defaultdict
from dataclasses import dataclass, replace

from django.db import transaction
from django.db.models import OuterRef, Subquery

from cfannotate.campaigns.models import Campaign, Original
from cfannotate.core.exceptions import InvalidInput
from cfannotate.labeling.models import LabelingUnit, UnitItem
from cfannotate.labeling.units import distance_weights

# Above any model priority (those are scores in [0, 2]), so the budget decides first.
BUDGET_PRIORITY_BASE = 1000.0


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
    items = (
        UnitItem.objects.filter(unit__campaign=campaign, unit__claims=0)
        .select_related("candidate", "unit__original")
        .order_by("unit__original_id", "unit_id", "position")
    )
    relationships = []
    priority: dict[str, float] = {}
    for item in items:
        data = item.candidate.edit.get("relationship")
        if not data:
            continue
        key = str(item.unit.original_id)
        # Keyed by the unit's original, whatever the candidate's generator recorded.
        relationships.append(replace(Relationship.from_dict(data), base=key))
        priority[key] = max(item.unit.original.priority, 0.0)
    if not relationships:
        raise InvalidInput(
            "No open unit has analysed counterfactuals to order: generate and select first, "
            "or wait until units are back in the pool."
        )
    chosen = select_originals(
        relationships, budget, priority=priority, weights=distance_weights(campaign)
    )
    moved = 0
    with transaction.atomic():
        by_original = defaultdict(list)
        open_units = LabelingUnit.objects.select_for_update(of=("self",)).filter(
            campaign=campaign, claims=0
        )
        for unit_id, original_id in open_units.values_list("id", "original_id"):
            by_original[str(original_id)].append(unit_id)
        # An earlier budget order is undone: its units go back to their original's priority.
        open_units.filter(priority__gte=BUDGET_PRIORITY_BASE).update(
            priority=Subquery(
                Original.objects.filter(pk=OuterRef("original_id")).values("priority")[:1]
            )
        )
        for rank, key in enumerate(chosen):
            moved += LabelingUnit.objects.filter(id__in=by_original[key], claims=0).update(
                priority=BUDGET_PRIORITY_BASE + len(chosen) - rank
            )
    return OrderSummary(
        budget=budget,
        originals=len(chosen),
        units=moved,
        candidates_considered=len(relationships),
    )
