"""Background tasks of quality control (run by `manage.py db_worker --queue-name default`)."""

from datetime import timedelta
from functools import partial

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django_tasks import TaskResultStatus, task

from cfannotate.campaigns.models import Campaign, CampaignStatus
from cfannotate.crowd.places import places_top_up
from cfannotate.quality.services import quality_after_assignment, quality_refresh


def sweep_seconds() -> float:
    """How often a campaign open for labeling is swept (`QUALITY_SWEEP_SECONDS`)."""
    return settings.QUALITY_SWEEP_SECONDS


@task()
def assess_assignment(assignment_id: int) -> None:
    """Verdict, vote, re-queues and decision proposals once an assignment's gold is
    answered and once it ended."""
    quality_after_assignment(assignment_id=assignment_id)
    campaign_id = (
        Campaign.objects.filter(assignments__id=assignment_id).values_list("id", flat=True).first()
    )
    if campaign_id is not None:
        sweep_schedule(campaign_id)


def assess_assignment_on_commit(assignment_id: int) -> None:
    """Queue `assess_assignment` once the caller's transaction commits.

    `robust`: a queue that cannot be written to right then is logged and never fails
    the worker's request, whose own writes are committed by then; the sweep catches up.
    """
    transaction.on_commit(partial(assess_assignment.enqueue, assignment_id), robust=True)


@task()
def sweep_labeling(campaign_id: int) -> None:
    """The safety net while a campaign is open for labeling: lapsed leases expire, every
    verdict, vote and re-queue is brought up to date (`quality_refresh`), so units
    whose tasks were lost or came too early go back on the queue without anyone pressing
    a button; a Prolific study short of places for them gets more, up to the cap its
    researcher set (`places_top_up`); then the next sweep is scheduled. A campaign no
    longer open ends the chain.
    """
    from cfannotate.labeling.assignments import assignments_expire

    campaign = Campaign.objects.filter(id=campaign_id).first()
    if campaign is None or campaign.status != CampaignStatus.LABELING:
        return
    assignments_expire(campaign=campaign)
    quality_refresh(campaign=campaign)
    places_top_up(campaign=campaign)
    sweep_schedule(campaign_id)


def sweep_schedule(campaign_id: int) -> None:
    """Queue the campaign's next sweep unless one is already waiting (a running sweep is
    not waiting: it schedules the one after itself). A backend that cannot run tasks
    later (the immediate one some tests use) gets no sweep."""
    from django_tasks_db.models import DBTaskResult  # the database queue's own table

    if not sweep_labeling.get_backend().supports_defer:
        return
    waiting = DBTaskResult.objects.filter(
        task_path=sweep_labeling.module_path,
        status=TaskResultStatus.READY,
        args_kwargs__args=[campaign_id],
    )
    if waiting.exists():
        return
    run_after = timezone.now() + timedelta(seconds=sweep_seconds())
    sweep_labeling.using(run_after=run_after).enqueue(campaign_id)


def sweep_schedule_on_commit(campaign_id: int) -> None:
    transaction.on_commit(partial(sweep_schedule, campaign_id), robust=True)
