"""Background tasks of labeling preparation."""

from django_tasks import task

from cfannotate.campaigns.models import Campaign
from cfannotate.labeling.units import units_create_from_selection


@task()
def select_units(campaign_id: int) -> int:
    """Turn a campaign's fluent candidates into labeling units once generation finished."""
    campaign = Campaign.objects.get(pk=campaign_id)
    return units_create_from_selection(campaign=campaign).units
