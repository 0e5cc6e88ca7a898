"""What labeling tells the apps above it, and what it lets them decide.

labeling never imports crowd or quality; they connect here in their `AppConfig.ready()`:

- `assignment_ended` (signal, `assignment_id`): an assignment was submitted, expired or
  returned, inside the transaction that ended it. quality assesses it once that commits.
- `labeling_opened` (signal, `campaign_id`): the campaign was opened to workers. quality
  schedules its sweep.
- `admission_checks`: each `(worker, campaign)` check may raise to refuse a worker a new
  assignment (quality: a worker its filters removed gets `NoWorkLeft`).
- `return_explanations`: each `(worker, campaign)` check may raise to explain why an
  assignment ended early before "You returned this assignment" (crowd: a block).
"""

from collections.abc import Callable

from django.dispatch import Signal

assignment_ended = Signal()
labeling_opened = Signal()

WorkerCheck = Callable[..., None]  # (*, worker, campaign) -> None, or raises
admission_checks: list[WorkerCheck] = []
return_explanations: list[WorkerCheck] = []


def register(checks: list[WorkerCheck], check: WorkerCheck) -> None:
    """Add a check once, however often `ready()` runs."""
    if check not in checks:
        checks.append(check)


def run_checks(checks: list[WorkerCheck], *, worker, campaign) -> None:
    for check in checks:
        check(worker=worker, campaign=campaign)
