"""Background tasks of quality control (run by `manage.py db_worker --queue-name default`)."""

from functools import partial

from django.db import transaction
from django_tasks import task

from cfannotate.quality.services import quality_after_assignment


@task()
def assess_assignment(assignment_id: int) -> None:
    """Verdict, vote, re-queues and decision proposals after one assignment ended."""
    quality_after_assignment(assignment_id=assignment_id)


def assess_assignment_on_commit(assignment_id: int) -> None:
    """Queue `assess_assignment` once the caller's transaction commits.

    `robust`: a queue that cannot be written to right then is logged and never fails
    the worker's request, whose own writes are committed by then; `quality_refresh`
    catches up.
    """
    transaction.on_commit(partial(assess_assignment.enqueue, assignment_id), robust=True)
