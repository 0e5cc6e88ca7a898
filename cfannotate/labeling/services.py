"""Writes on a campaign's labeling stage: open it to workers, pause it."""

from django.db import transaction

from cfannotate.campaigns.models import Campaign, CampaignStatus
from cfannotate.core.exceptions import Conflict
from cfannotate.labeling.hooks import labeling_opened
from cfannotate.labeling.models import GoldKind, GoldRound, LabelingUnit
from cfannotate.labeling.selectors import gold_coverage, gold_size_note
from cfannotate.labeling.tasks import units_build_pending


@transaction.atomic
def labeling_open(*, campaign: Campaign) -> list[str]:
    """Open the campaign to workers; returns warnings the researcher should read."""
    if campaign.status == CampaignStatus.FINISHED:
        raise Conflict("This campaign is finished; it cannot be opened again.")
    warnings = []
    if not LabelingUnit.objects.filter(campaign=campaign).exists():
        if not units_build_pending(campaign.pk):
            raise Conflict("There is nothing to label yet: generate and select candidates first.")
        # Opening queues behind the build: workers are served once units exist.
        warnings.append(
            "Labeling units are still being built from the candidates; workers who arrive "
            "before they are ready are told to come back in a moment."
        )
    gold = GoldRound.objects.filter(campaign=campaign, is_active=True)
    if gold.filter(kind=GoldKind.GOLD).count() < campaign.gold_rounds_per_assignment:
        warnings.append(
            f"Fewer active gold rounds than the {campaign.gold_rounds_per_assignment} each "
            "assignment hides: workers get fewer, and the gold filter sees less."
        )
    coverage = gold_coverage(campaign)
    if coverage.runs_short:
        warnings.append(coverage.message)
    if size_note := gold_size_note(campaign):
        warnings.append(size_note)
    if campaign.training_rounds and not gold.filter(kind=GoldKind.TRAINING).exists():
        warnings.append("No training round exists: assignments start without one.")
    Campaign.objects.filter(pk=campaign.pk).update(status=CampaignStatus.LABELING)
    campaign.status = CampaignStatus.LABELING
    labeling_opened.send(sender=Campaign, campaign_id=campaign.id)  # quality's sweep starts
    return warnings


def labeling_pause(*, campaign: Campaign) -> None:
    """No new assignments; assignments in progress can still be finished."""
    if campaign.status != CampaignStatus.LABELING:
        raise Conflict("Only a campaign that is open for labeling can be paused.")
    Campaign.objects.filter(pk=campaign.pk).update(status=CampaignStatus.PAUSED)
    campaign.status = CampaignStatus.PAUSED
