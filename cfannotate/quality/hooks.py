"""quality's answers to labeling's hooks (`cfannotate.labeling.hooks`), connected in
`QualityConfig.ready()`: assess an assignment once it ends, sweep an open campaign, and
give a worker the filters removed no new assignment."""

from cfannotate.labeling import hooks
from cfannotate.labeling.assignments import FILTERED, NO_NEED, NoWorkLeft
from cfannotate.quality.models import WorkerQuality
from cfannotate.quality.tasks import assess_assignment_on_commit, sweep_schedule_on_commit


def assess_ended_assignment(sender, *, assignment_id: int, **kwargs) -> None:
    assess_assignment_on_commit(assignment_id)


def schedule_sweep(sender, *, campaign_id: int, **kwargs) -> None:
    sweep_schedule_on_commit(campaign_id)  # re-queues go on without anyone asking


def refuse_filtered_worker(*, worker, campaign) -> None:
    """A worker the quality filters removed gets no more work here (quality.md §4)."""
    if WorkerQuality.objects.filter(campaign=campaign, worker=worker, qualified=False).exists():
        raise NoWorkLeft(FILTERED, come_back=NO_NEED)


def connect() -> None:
    hooks.assignment_ended.connect(assess_ended_assignment, dispatch_uid="quality.assess")
    hooks.labeling_opened.connect(schedule_sweep, dispatch_uid="quality.sweep")
    hooks.register(hooks.admission_checks, refuse_filtered_worker)
