"""Reads across the labeling stage: progress of a campaign's units and assignments."""

import math
from dataclasses import dataclass

from django.db.models import Count, Exists, F, OuterRef, Q, Subquery, Sum
from django.db.models.functions import Coalesce

from cfannotate.campaigns.models import Campaign
from cfannotate.candidates.models import Candidate
from cfannotate.core.text import counted
from cfannotate.labeling.models import (
    Assignment,
    AssignmentState,
    GoldKind,
    GoldRound,
    LabelingUnit,
    Round,
    RoundKind,
)
from cfannotate.labeling.units import units_given_out


@dataclass(frozen=True)
class LabelingProgress:
    units: int
    units_done: int
    judgments_needed: int
    judgments_done: int
    assignments_active: int
    assignments_submitted: int
    assignments_expired: int
    gold_rounds: int
    training_rounds: int

    @property
    def percent(self) -> int:
        return (
            round(100 * self.judgments_done / self.judgments_needed) if self.judgments_needed else 0
        )


def labeling_progress(campaign: Campaign) -> LabelingProgress:
    units = LabelingUnit.objects.filter(campaign=campaign).aggregate(
        units=Count("id"),
        done=Count("id", filter=Q(completed__gte=F("judgments_needed"))),
        needed=Sum("judgments_needed"),
        completed=Sum("completed"),
    )
    states = dict(
        Assignment.objects.filter(campaign=campaign)
        .values_list("state")
        .annotate(n=Count("id"))
        .values_list("state", "n")
    )
    gold = dict(
        campaign.gold_rounds.filter(is_active=True)
        .values_list("kind")
        .annotate(n=Count("id"))
        .values_list("kind", "n")
    )
    return LabelingProgress(
        units=units["units"],
        units_done=units["done"],
        judgments_needed=units["needed"] or 0,
        judgments_done=units["completed"] or 0,
        assignments_active=states.get(AssignmentState.ACTIVE, 0),
        assignments_submitted=states.get(AssignmentState.SUBMITTED, 0),
        assignments_expired=states.get(AssignmentState.EXPIRED, 0)
        + states.get(AssignmentState.RETURNED, 0),
        gold_rounds=gold.get(GoldKind.GOLD, 0),
        training_rounds=gold.get(GoldKind.TRAINING, 0),
    )


def gold_rounds_of(campaign: Campaign, *, kind: str | None = None):
    """The campaign's gold and training rounds with their items and expected answers, and
    how many rounds of assignments gave each to a worker. Researcher pages only."""
    from django.db.models import Prefetch

    from cfannotate.labeling.models import GoldItem, GoldRound

    rounds = GoldRound.objects.filter(campaign=campaign)
    if kind:
        rounds = rounds.filter(kind=kind)
    items = GoldItem.objects.select_related("candidate", "expected_label").order_by("position")
    return (
        rounds.select_related("original")
        .prefetch_related(Prefetch("items", queryset=items))
        .annotate(times_given=Count("rounds"))
        .order_by("-created_at", "-id")
    )


@dataclass(frozen=True)
class GoldCoverage:
    """How far the hidden gold goes: a worker never sees a gold round twice."""

    gold_rounds: int  # active hidden gold rounds
    per_assignment: int
    assignments_needed: int  # about, to give every unit the judgments it still needs
    workers_out_of_gold: int  # workers who have seen every active gold round

    @property
    def assignments_per_worker(self) -> int:
        """Assignments a worker can take with a full set of gold rounds."""
        return self.gold_rounds // self.per_assignment if self.per_assignment else 0

    @property
    def runs_short(self) -> bool:
        """A single worker could take more assignments than the gold covers."""
        return self.per_assignment > 0 and self.assignments_needed > self.assignments_per_worker

    @property
    def message(self) -> str:
        if not self.per_assignment:
            return "Assignments carry no gold round: workers are judged on time alone."
        if not self.gold_rounds:
            return "There is no active gold round: workers are judged on time alone."
        needed = (
            f"about {counted(self.assignments_needed, 'more assignment')}"
            if self.assignments_needed
            else "no more assignments"
        )
        full = self.assignments_per_worker
        carry = (
            "no assignment of a worker carries a full set"
            if full == 0
            else "each worker's first assignment carries a full set"
            if full == 1
            else f"each worker's first {full} assignments carry a full set"
        )
        text = (
            f"{counted(self.gold_rounds, 'gold round')}, {self.per_assignment} per "
            f"assignment: {carry}; the units need {needed} in all. A worker who has seen "
            "every gold round still gets assignments, without gold, and their earlier "
            "verdicts stand."
        )
        if self.workers_out_of_gold:
            have = "has" if self.workers_out_of_gold == 1 else "have"
            text += (
                f" {counted(self.workers_out_of_gold, 'worker')} {have} seen every gold "
                "round: add gold rounds to keep checking them."
            )
        return text


def gold_coverage(campaign: Campaign) -> GoldCoverage:
    gold_rounds = GoldRound.objects.filter(
        campaign=campaign, kind=GoldKind.GOLD, is_active=True
    ).count()
    wanted = LabelingUnit.objects.filter(campaign=campaign).aggregate(
        n=Sum(F("judgments_needed") - F("completed"))
    )["n"]
    seen = (
        Round.objects.filter(assignment__campaign=campaign, kind=RoundKind.GOLD)
        .values("worker_id")
        .annotate(seen=Count("gold_round_id", distinct=True))
        .filter(seen__gte=gold_rounds)
    )
    return GoldCoverage(
        gold_rounds=gold_rounds,
        per_assignment=campaign.gold_rounds_per_assignment,
        assignments_needed=math.ceil(max(wanted or 0, 0) / campaign.rounds_per_assignment),
        workers_out_of_gold=seen.count() if gold_rounds else 0,
    )


def _sizes(sizes: set[int]) -> str:
    """{3} -> "3", {2, 3} -> "2 or 3"."""
    ordered = [str(size) for size in sorted(sizes)]
    return ordered[0] if len(ordered) == 1 else ", ".join(ordered[:-1]) + " or " + ordered[-1]


def gold_size_note(campaign: Campaign) -> str:
    """Why some hidden gold rounds stand out ("" when none does): a round shows its number of
    counterfactuals ("Edited version 1 of 2"), so a gold round holding a number no labeling
    unit holds tells a worker who counts that it is gold. Before units exist, a unit's size is
    the campaign's candidates selected per original."""
    unit_sizes = set(
        LabelingUnit.objects.filter(campaign=campaign)
        .annotate(n=Count("items"))
        .filter(n__gt=0)
        .values_list("n", flat=True)
        .distinct()
    ) or {campaign.selected_per_original}
    gold_sizes = list(
        GoldRound.objects.filter(campaign=campaign, kind=GoldKind.GOLD, is_active=True)
        .annotate(n=Count("items"))
        .values_list("n", flat=True)
    )
    apart = {size for size in gold_sizes if size not in unit_sizes}
    if not apart:
        return ""
    odd = sum(1 for size in gold_sizes if size in apart)
    they, are, them = ("it", "is", "it") if odd == 1 else ("they", "are", "them")
    return (
        f"{counted(odd, 'hidden gold round')} of {len(gold_sizes)} "
        f"hold{'s' if odd == 1 else ''} {_sizes(apart)} counterfactuals, and labeling units hold "
        f"{_sizes(unit_sizes)}: a worker who counts the edited versions can tell {they} {are} "
        f"gold. Give {them} as many counterfactuals as a unit, or switch {them} off."
    )


def gold_pick_originals(campaign: Campaign, *, search: str = ""):
    """The originals a gold or training round can use (no worker was given a labeling unit
    of them; one in units is taken out of them when a round is made), those whose id,
    text or context contains `search`, each with its label, how many candidates it has,
    whether it is in units, and how many gold and training rounds already use it. In
    upload order; researcher pages only."""

    def count_of(rows):
        counted = rows.order_by().values("original").annotate(n=Count("id")).values("n")
        return Coalesce(Subquery(counted), 0)

    def rounds(kind: str):
        return count_of(GoldRound.objects.filter(original=OuterRef("pk"), kind=kind))

    units = LabelingUnit.objects.filter(campaign=campaign)
    given_out = units_given_out(units).values("original_id")
    originals = campaign.originals.exclude(pk__in=given_out)
    if search:
        originals = originals.filter(
            Q(external_id__icontains=search)
            | Q(text__icontains=search)
            | Q(context__icontains=search)  # a pair task's fixed side (the premise)
        )
    return (
        originals.select_related("label")
        .annotate(
            candidate_count=count_of(Candidate.objects.filter(original=OuterRef("pk"))),
            in_units=Exists(units.filter(original=OuterRef("pk"))),
            gold_count=rounds(GoldKind.GOLD),
            training_count=rounds(GoldKind.TRAINING),
        )
        .order_by("id")
    )
