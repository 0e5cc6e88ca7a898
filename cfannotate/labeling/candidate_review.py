"""labeling's side of the researcher's review of candidates (`candidates.hooks`).

Wired in `LabelingConfig.ready()`: when candidates are in, select them into units; when
the researcher accepts, rejects or edits one, keep what a worker was given unchanged; and
give the classifier in the loop the gold answers as the most trusted known labels.
"""

from django.db import transaction

from cfannotate.campaigns.models import Campaign
from cfannotate.candidates import hooks
from cfannotate.candidates.models import Candidate, CandidateStatus
from cfannotate.core.exceptions import Conflict
from cfannotate.labeling import gold, units
from cfannotate.labeling.models import GoldItem, GoldRound, LabelingUnit
from cfannotate.labeling.tasks import select_units


def select_when_ready(sender, *, campaign_id: int, wait: bool = False, **kwargs) -> int | None:
    """Select the campaign's diverse candidates into units: now, or queued after commit."""
    if wait:
        campaign = Campaign.objects.get(pk=campaign_id)
        return units.units_create_from_selection(campaign=campaign).units
    transaction.on_commit(lambda: select_units.enqueue(campaign_id))
    return None


class LabelingSide:
    """What the review asks of labeling (`candidates.hooks.LabelingSide`)."""

    def in_unit(self, candidate: Candidate) -> bool:
        return LabelingUnit.objects.filter(items__candidate=candidate).exists()

    def raise_if_given(self, candidate: Candidate, doing: str) -> None:
        if candidate.status == CandidateStatus.GOLD:
            gold.gold_round_raise_if_given(candidate.gold_item.gold_round)
        unit = LabelingUnit.objects.filter(items__candidate=candidate).first()
        if unit is not None and not units.units_lock_unclaimed(
            LabelingUnit.objects.filter(pk=unit.pk)
        ):
            raise Conflict(
                f"A worker was already given this candidate's labeling unit; it cannot be "
                f"{doing} now."
            )

    def raise_if_gold_original(self, candidate: Candidate) -> None:
        if GoldRound.objects.filter(original_id=candidate.original_id).exists():
            raise Conflict(
                "This candidate's original has a gold round; its candidates are never shown in "
                "real rounds, so that the gold round cannot be recognised."
            )

    def place(self, candidate: Candidate) -> None:
        units.units_place_candidates(campaign=candidate.campaign, candidates=[candidate])

    def remove(self, candidate: Candidate) -> None:
        units.units_remove_candidates(candidates=[candidate])


def gold_answers(campaign: Campaign) -> list[hooks.LabeledCandidate]:
    """The researcher's answers in gold and training rounds: each item's expected label,
    None for an item written as not a valid counterfactual."""
    items = (
        GoldItem.objects.filter(gold_round__campaign=campaign)
        .order_by("candidate_id")
        .values_list(
            "candidate_id",
            "candidate__text",
            "expected_valid",
            "expected_label__value",
            "candidate__original__context",
        )
    )
    return [
        (pk, text, label if valid else None, context) for pk, text, valid, label, context in items
    ]


GOLD_RANK = 0  # the most trusted known labels: the researcher's own answers


def connect() -> None:
    hooks.candidates_ready.connect(select_when_ready, dispatch_uid="labeling.select")
    hooks.wire_review(LabelingSide())
    hooks.label_source_add(GOLD_RANK, gold_answers)
