"""Reads across the labeling stage: progress of a campaign's units and assignments."""

from dataclasses import dataclass

from django.db.models import Count, F, Q, Sum

from cfannotate.campaigns.models import Campaign
from cfannotate.labeling.models import Assignment, AssignmentState, GoldKind, LabelingUnit


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
