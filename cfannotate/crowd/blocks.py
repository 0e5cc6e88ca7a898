"""Which block keeps a worker out of a campaign, and the page a blocked worker is shown.

An administrator's block (`Worker.status`) covers every campaign on the site. A
researcher's block (`WorkerBlock`) covers that researcher's campaigns, or one of them,
and nobody else's: the same worker goes on working for other researchers. Entry
(`services.assignment_enter`, `services.link_enter`) refuses a blocked worker with
`WorkerBlocked`; the worker pages say the same once a block has ended the work.
"""

from django.db.models import Q

from cfannotate.core.exceptions import Forbidden
from cfannotate.crowd.models import BlockScope, Worker, WorkerBlock, WorkerStatus

RETURN_IT = (
    " If you accepted it on MTurk or Prolific, return it there so that it does not count "
    "against you."
)
BLOCKED_MESSAGES = {
    BlockScope.EVERYWHERE: (
        "This worker account cannot take tasks in this project: an administrator of this "
        "site blocked it."
    ),
    BlockScope.RESEARCHER: (
        "The researcher who runs this task blocked your worker account from their tasks, so "
        "you cannot take this one. Tasks of other researchers are not affected."
    ),
    BlockScope.CAMPAIGN: (
        "The researcher who runs this task blocked your worker account from it, so you cannot "
        "take it. Their other tasks are not affected."
    ),
}


class WorkerBlocked(Forbidden):
    """The worker is blocked from this campaign; `scope` says by whom and how widely."""

    title = "You cannot take this task"

    def __init__(self, scope: str) -> None:
        super().__init__(BLOCKED_MESSAGES[scope] + RETURN_IT)
        self.scope = scope


def _scoped_blocks(campaign):
    return WorkerBlock.objects.filter(
        Q(scope=BlockScope.CAMPAIGN, campaign=campaign)
        | Q(scope=BlockScope.RESEARCHER, researcher_id=campaign.owner_id)
    )


# The widest block is the one a worker and a researcher are told about.
WIDEST_FIRST = (BlockScope.EVERYWHERE, BlockScope.RESEARCHER, BlockScope.CAMPAIGN)


def worker_block_for(*, worker: Worker, campaign) -> str | None:
    """The scope of the block that keeps this worker out of this campaign; None if none does.

    `worker` is read in this request (its status is not read again).
    """
    if worker.status == WorkerStatus.BLOCKED:
        return BlockScope.EVERYWHERE
    scopes = set(_scoped_blocks(campaign).filter(worker=worker).values_list("scope", flat=True))
    return next((scope for scope in WIDEST_FIRST if scope in scopes), None)


def blocks_in(campaign, worker_ids) -> dict[int, str]:
    """worker id → the scope of the widest block keeping them out of this campaign."""
    found: dict[int, set[str]] = {}
    everywhere = Worker.objects.filter(id__in=worker_ids, status=WorkerStatus.BLOCKED)
    for worker_id in everywhere.values_list("id", flat=True):
        found.setdefault(worker_id, set()).add(BlockScope.EVERYWHERE)
    scoped = _scoped_blocks(campaign).filter(worker_id__in=worker_ids)
    for worker_id, scope in scoped.values_list("worker_id", "scope"):
        found.setdefault(worker_id, set()).add(scope)
    return {
        worker_id: next(scope for scope in WIDEST_FIRST if scope in scopes)
        for worker_id, scopes in found.items()
    }


def worker_blocked_in_scope(*, worker: Worker, scope: str, campaign=None) -> bool:
    """Whether exactly this block is in place already (blocking twice does nothing)."""
    if scope == BlockScope.EVERYWHERE:
        return Worker.objects.filter(pk=worker.pk, status=WorkerStatus.BLOCKED).exists()
    if campaign is None:
        return False
    blocks = WorkerBlock.objects.filter(worker=worker, scope=scope)
    if scope == BlockScope.CAMPAIGN:
        return blocks.filter(campaign=campaign).exists()
    return blocks.filter(researcher_id=campaign.owner_id).exists()


def raise_if_blocked(*, worker: Worker, campaign) -> None:
    scope = worker_block_for(worker=worker, campaign=campaign)
    if scope is not None:
        raise WorkerBlocked(scope)
