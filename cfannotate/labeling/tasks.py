"""Background tasks of labeling preparation."""

from django_tasks import TaskResultStatus, task

from cfannotate.campaigns.models import Campaign
from cfannotate.labeling.units import units_create_from_selection


@task()
def select_units(campaign_id: int) -> int:
    """Turn a campaign's fluent candidates into labeling units once generation finished."""
    campaign = Campaign.objects.get(pk=campaign_id)
    return units_create_from_selection(campaign=campaign).units


def units_build_pending(campaign_id: int) -> bool:
    """Whether a unit build for the campaign is queued or running (after an import or a
    generation run), so labeling can open now and serve workers once it is done."""
    from django_tasks_db.models import DBTaskResult  # the database queue's own table

    return DBTaskResult.objects.filter(
        task_path=select_units.module_path,
        status__in=[TaskResultStatus.READY, TaskResultStatus.RUNNING],
        args_kwargs__args=[campaign_id],
    ).exists()
