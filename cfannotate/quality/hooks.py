"""quality's answers to labeling's hooks (`cfannotate.labeling.hooks`), connected in
`QualityConfig.ready()`: assess an assignment once it ends, sweep an open campaign, and
give a worker the filters removed no new assignment; and to candidates' `label_sources`:
the crowd's kept labels, for the classifier in the loop."""

from django.db.models import Q

from cfannotate.candidates import hooks as candidates_hooks
from cfannotate.labeling import hooks
from cfannotate.labeling.assignments import FILTERED, NO_NEED, NoWorkLeft
from cfannotate.quality.models import AggregatedLabel, WorkerQuality
from cfannotate.quality.tasks import assess_assignment_on_commit, sweep_schedule_on_commit


def assess_ended_assignment(sender, *, assignment_id: int, **kwargs) -> None:
    assess_assignment_on_commit(assignment_id)


def schedule_sweep(sender, *, campaign_id: int, **kwargs) -> None:
    sweep_schedule_on_commit(campaign_id)  # re-queues go on without anyone asking


def refuse_filtered_worker(*, worker, campaign) -> None:
    """A worker the quality filters removed gets no more work here (quality.md §4); a worker
    on hold for more gold does."""
    removed = WorkerQuality.objects.filter(
        campaign=campaign, worker=worker, qualified=False, held_until__isnull=True
    )
    if removed.exists():
        raise NoWorkLeft(FILTERED, come_back=NO_NEED)


CROWD_RANK = 1  # after the researcher's gold answers


def crowd_labels(campaign) -> list[candidates_hooks.LabeledCandidate]:
    """The vote's verdicts: a kept label, or None where the qualified workers found the
    counterfactual invalid. A candidate still waiting for votes has no verdict yet."""
    verdicts = (
        AggregatedLabel.objects.filter(candidate__campaign=campaign)
        .filter(Q(kept=True, label__isnull=False) | Q(is_valid=False, qualified_votes__gt=0))
        .order_by("candidate_id")
        .values_list(
            "candidate_id",
            "candidate__text",
            "kept",
            "label__value",
            "candidate__original__context",
        )
    )
    return [
        (pk, text, label if kept else None, context) for pk, text, kept, label, context in verdicts
    ]


def connect() -> None:
    hooks.assignment_ended.connect(assess_ended_assignment, dispatch_uid="quality.assess")
    hooks.labeling_opened.connect(schedule_sweep, dispatch_uid="quality.sweep")
    hooks.register(hooks.admission_checks, refuse_filtered_worker)
    candidates_hooks.label_source_add(CROWD_RANK, crowd_labels)
