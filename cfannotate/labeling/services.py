"""Writes on a campaign's labeling stage: open it to workers, pause it."""

from django.db import transaction

from cfannotate.campaigns.models import Campaign, CampaignStatus
from cfannotate.core.exceptions import Conflict
from cfannotate.labeling.models import GoldKind, GoldRound, LabelingUnit


@transaction.atomic
def labeling_open(*, campaign: Campaign) -> list[str]:
    """Open the campaign to workers; returns warnings the researcher should read."""
    if not LabelingUnit.objects.filter(campaign=campaign).exists():
        raise Conflict("There is nothing to label yet: generate and select candidates first.")
    if campaign.status == CampaignStatus.FINISHED:
        raise Conflict("This campaign is finished; it cannot be opened again.")
    warnings = []
    gold = GoldRound.objects.filter(campaign=campaign, is_active=True)
    if gold.filter(kind=GoldKind.GOLD).count() < campaign.gold_rounds_per_assignment:
        warnings.append(
            f"Fewer active gold rounds than the {campaign.gold_rounds_per_assignment} each "
            "assignment hides: workers get fewer, and the gold filter sees less."
        )
    if campaign.training_rounds and not gold.filter(kind=GoldKind.TRAINING).exists():
        warnings.append("No training round exists: assignments start without one.")
    Campaign.objects.filter(pk=campaign.pk).update(status=CampaignStatus.LABELING)
    campaign.status = CampaignStatus.LABELING
    return warnings


def labeling_pause(*, campaign: Campaign) -> None:
    """No new assignments; assignments in progress can still be finished."""
    if campaign.status != CampaignStatus.LABELING:
        raise Conflict("Only a campaign that is open for labeling can be paused.")
    Campaign.objects.filter(pk=campaign.pk).update(status=CampaignStatus.PAUSED)
    campaign.status = CampaignStatus.PAUSED
