"""Promote candidates of one original to a gold (or training) round with known answers.

The review page's "Promote to gold" and the gold API's `candidates` form call it. A gold
round's original stays out of real rounds, so its labeling units are emptied first.
"""

from collections.abc import Mapping

from django.db import transaction

from cfannotate.campaigns.models import Campaign, Original
from cfannotate.campaigns.services import label_lookup
from cfannotate.candidates.models import Candidate, CandidateStatus
from cfannotate.core.exceptions import NotFound
from cfannotate.labeling import gold, units
from cfannotate.labeling.models import GoldKind, GoldRound


def _promoted_items_checked(
    campaign: Campaign, original: Original, items: list
) -> tuple[list[tuple[Candidate, gold.GoldAnswer]], gold.Problems]:
    lookup = label_lookup(campaign)
    mine = {candidate.pk: candidate for candidate in original.candidates.all()}
    entries, problems, seen = [], [], set()
    for number, item in enumerate(items, start=1):
        where = f"items[{number}]"
        if not isinstance(item, Mapping):
            problems.append((where, "Each item is an object with candidate_id, valid and label."))
            continue
        candidate_id = item.get("candidate_id")
        candidate = mine.get(candidate_id) if isinstance(candidate_id, int) else None
        if candidate is None:
            problems.append(
                (f"{where}.candidate_id", f"No candidate {candidate_id!r} of this original.")
            )
        elif candidate.pk in seen:
            problems.append((f"{where}.candidate_id", "Given twice in this round."))
        elif candidate.status == CandidateStatus.GOLD:
            problems.append((f"{where}.candidate_id", "Already an item of a gold round."))
        elif candidate.judgments.exists():
            problems.append((f"{where}.candidate_id", "Workers already judged it."))
        if candidate is not None:
            seen.add(candidate.pk)
        answer, answer_problems = gold.gold_answer_checked(item, lookup, where)
        problems += answer_problems
        if candidate is not None and answer is not None:
            entries.append((candidate, answer))
    return entries, problems


@transaction.atomic
def candidates_promote_to_gold(
    *, campaign: Campaign, original: Original, items: list[Mapping], kind: str = GoldKind.GOLD
) -> GoldRound:
    """Turn candidates of one original into a gold (or training) round with known answers.

    `items`: `[{"candidate_id", "valid", "label", "explanation"}]`. A gold round's original
    stays out of real rounds, so its labeling units are removed first and their other
    candidates go back to generated; if a worker was given any of them, nothing happens.
    """
    if original.campaign_id != campaign.id:
        raise NotFound(f"No original {original.pk} in this campaign.")
    problems = gold.gold_round_shape_checked(campaign, kind, items)
    entries = []
    if isinstance(items, list):
        entries, item_problems = _promoted_items_checked(campaign, original, items)
        problems += item_problems
    gold.problems_raise("The gold round was not saved; fix the fields below.", problems)
    units.original_units_withdraw(campaign=campaign, original=original)
    return gold.gold_round_create(
        campaign=campaign, original=original, kind=str(kind).strip().lower(), entries=entries
    )
