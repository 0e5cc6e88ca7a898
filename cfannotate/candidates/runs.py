"""Generation runs: a campaign's originals split into chunks that background workers take.

Each chunk is one task on the `generation` queue. Claiming a chunk gives its worker
a lease; a chunk whose worker died (lease expired) is taken over by the next sweep.
Writes are idempotent: candidates are unique per (original, text), and a chunk's
completion is counted once, by the attempt that holds it.
"""

import logging
import socket
import time
from datetime import timedelta

from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from cfannotate.campaigns.models import Campaign
from cfannotate.candidates.hooks import candidates_ready_send
from cfannotate.candidates.models import ChunkState, GenerationChunk, GenerationRun, RunState
from cfannotate.candidates.selectors import generation_overview
from cfannotate.core.exceptions import Conflict, InvalidInput
from cfannotate.core.text import counted

logger = logging.getLogger(__name__)

DEFAULT_CHUNK_SIZE = 32
# A chunk of 32 originals takes seconds on a GPU and a few minutes on CPU; a worker
# silent for this long is presumed dead.
CHUNK_LEASE = timedelta(minutes=30)
# The live progress is written at most this often (seconds): enough for a page that
# polls every 2 s, few enough writes not to slow generation.
PROGRESS_INTERVAL = 1.0
# How many unknown original ids a refused run names.
UNKNOWN_IDS_NAMED = 10


def worker_name() -> str:
    import os

    return f"{socket.gethostname()}:{os.getpid()}"


@transaction.atomic
def generation_run_create(
    *,
    campaign: Campaign,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    original_ids: list[int] | None = None,
) -> GenerationRun:
    """A run over the campaign's originals (or the given ones), with its chunks, unqueued."""
    if chunk_size < 1:
        raise InvalidInput("chunk_size must be at least 1.", fields={"chunk_size": ["≥ 1"]})
    _raise_if_run_in_progress(campaign)
    ids = list(campaign.originals.order_by("id").values_list("id", flat=True))
    if original_ids is not None:
        _raise_unknown_originals(original_ids, known=set(ids))
        wanted = set(original_ids)
        ids = [pk for pk in ids if pk in wanted]
    if not ids:
        raise InvalidInput("The campaign has no originals to perturb.")
    chunks = [ids[start : start + chunk_size] for start in range(0, len(ids), chunk_size)]
    run = GenerationRun.objects.create(
        campaign=campaign, chunk_size=chunk_size, chunks_total=len(chunks)
    )
    GenerationChunk.objects.bulk_create(
        GenerationChunk(run=run, index=index, original_ids=chunk)
        for index, chunk in enumerate(chunks)
    )
    return run


def _raise_if_run_in_progress(campaign: Campaign) -> None:
    if GenerationRun.objects.filter(
        campaign=campaign, state__in=[RunState.QUEUED, RunState.RUNNING]
    ).exists():
        raise Conflict(
            "This campaign already has a generation run in progress; cancel it "
            "or wait for it to finish."
        )


def _raise_unknown_originals(original_ids: list[int], *, known: set[int]) -> None:
    """InvalidInput naming the ids (the first UNKNOWN_IDS_NAMED) of no original of the campaign."""
    unknown = list(dict.fromkeys(pk for pk in original_ids if pk not in known))
    if not unknown:
        return
    problems = [f"No original {pk} in this campaign." for pk in unknown[:UNKNOWN_IDS_NAMED]]
    if len(unknown) > UNKNOWN_IDS_NAMED:
        problems.append(f"And {len(unknown) - UNKNOWN_IDS_NAMED} more.")
    raise InvalidInput(
        f"{counted(len(unknown), 'original id')} of original_ids "
        f"{'is' if len(unknown) == 1 else 'are'} not in this campaign; nothing was started.",
        fields={"original_ids": problems},
    )


def generation_run_start(
    *,
    campaign: Campaign,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    original_ids: list[int] | None = None,
    not_generated_only: bool = False,
) -> GenerationRun:
    """Create a run and queue one task per chunk once the transaction commits.

    `not_generated_only`: for the originals never generated and without candidates (a
    campaign generated for a few originals first, as the demo's), not again for all."""
    from cfannotate.candidates.tasks import generate_chunk

    if not_generated_only:
        # Said first: the originals of a run in progress do not count as not generated.
        _raise_if_run_in_progress(campaign)
        if original_ids is not None:
            raise InvalidInput(
                "Give original ids or ask for the originals not generated yet, not both.",
                fields={"original_ids": ["Not with not_generated_only."]},
            )
        original_ids = list(generation_overview(campaign).not_generated_ids)
        if not original_ids:
            raise InvalidInput(
                "Every original has been generated already: generate again for all of "
                "them, or for those that came out with none."
            )
    with transaction.atomic():
        run = generation_run_create(
            campaign=campaign, chunk_size=chunk_size, original_ids=original_ids
        )
        chunk_ids = list(run.chunks.values_list("id", flat=True))
        transaction.on_commit(lambda: [generate_chunk.enqueue(chunk_id) for chunk_id in chunk_ids])
    return run


def _claim(chunk_id: int, worker: str) -> GenerationChunk | None:
    """Take the chunk if it is queued, or running under an expired lease; else None."""
    now = timezone.now()
    with transaction.atomic():
        chunk = (
            GenerationChunk.objects.select_for_update()
            .select_related("run")
            .filter(pk=chunk_id)
            .first()
        )
        if chunk is None:
            return None
        expired = chunk.state == ChunkState.RUNNING and (
            chunk.lease_expires_at is None or chunk.lease_expires_at < now
        )
        if chunk.state != ChunkState.QUEUED and not expired:
            return None
        if chunk.run.state == RunState.CANCELLED:
            chunk.state = ChunkState.CANCELLED
            chunk.save(update_fields=["state"])
            return None
        chunk.state = ChunkState.RUNNING
        chunk.attempts += 1
        chunk.worker = worker
        chunk.started_at = now
        chunk.lease_expires_at = now + CHUNK_LEASE
        chunk.error = ""
        chunk.originals_done = 0
        chunk.save(
            update_fields=[
                "state",
                "attempts",
                "worker",
                "started_at",
                "lease_expires_at",
                "error",
                "originals_done",
            ]
        )
        GenerationRun.objects.filter(pk=chunk.run_id, state=RunState.QUEUED).update(
            state=RunState.RUNNING, started_at=now
        )
        return chunk


def _finish(
    chunk: GenerationChunk,
    *,
    state: str,
    stored: int = 0,
    error: str = "",
    outcomes: dict | None = None,
) -> bool:
    """Record the outcome if this attempt still holds the chunk; count it on the run once."""
    with transaction.atomic():
        updated = GenerationChunk.objects.filter(
            pk=chunk.pk,
            state=ChunkState.RUNNING,
            attempts=chunk.attempts,
        ).update(
            state=state,
            candidates_stored=stored,
            outcomes=outcomes or {},
            error=error[:2000],
            finished_at=timezone.now(),
            lease_expires_at=None,
        )
        if not updated:
            return False  # another worker took over after our lease expired
        counter = "chunks_done" if state == ChunkState.DONE else "chunks_failed"
        GenerationRun.objects.filter(pk=chunk.run_id).update(
            **{counter: F(counter) + 1}, candidates_stored=F("candidates_stored") + stored
        )
        run = GenerationRun.objects.select_for_update().get(pk=chunk.run_id)
        if (
            run.state == RunState.RUNNING
            and run.chunks_done + run.chunks_failed >= run.chunks_total
        ):
            run.state = RunState.DONE if run.chunks_failed == 0 else RunState.FAILED
            run.finished_at = timezone.now()
            run.save(update_fields=["state", "finished_at"])
            if run.state == RunState.DONE:
                # Once every chunk is in, labeling selects the diverse candidates.
                candidates_ready_send(run.campaign_id)
    return True


class _ChunkProgress:
    """The `on_progress` hook of a chunk's generation: writes its originals done, at most
    once a PROGRESS_INTERVAL (the last original at once), and renews the lease, since a
    worker that reports is alive. An attempt that lost the chunk writes nothing."""

    def __init__(self, chunk: GenerationChunk) -> None:
        self.chunk = chunk
        self.originals = len(chunk.original_ids)
        self.written_at: float | None = None

    def __call__(self, originals_done: int) -> None:
        now = time.monotonic()
        done = min(originals_done, self.originals)
        recent = self.written_at is not None and now - self.written_at < PROGRESS_INTERVAL
        if recent and done < self.originals:
            return
        self.written_at = now
        GenerationChunk.objects.filter(
            pk=self.chunk.pk, state=ChunkState.RUNNING, attempts=self.chunk.attempts
        ).update(originals_done=done, lease_expires_at=timezone.now() + CHUNK_LEASE)


def generation_chunk_process(
    *, chunk_id: int, worker: str | None = None, lm=None, fluency_lm=None, device: str = "auto"
) -> str:
    """Generate and store one chunk's candidates. Returns what happened, in a word."""
    from cfannotate.campaigns.models import Original
    from cfannotate.candidates.services import candidates_generate

    chunk = _claim(chunk_id, worker or worker_name())
    if chunk is None:
        return "skipped"
    try:
        originals = list(
            Original.objects.filter(pk__in=chunk.original_ids)
            .select_related("label")
            .order_by("id")
        )
        summary = candidates_generate(
            campaign=chunk.run.campaign,
            originals=originals,
            device=device,
            lm=lm,
            fluency_lm=fluency_lm,
            on_progress=_ChunkProgress(chunk),
        )
    except KeyboardInterrupt:
        # Stopped by Ctrl-C (a foreground `generate`, a worker shut down): the lease ends
        # now, so recovery takes the chunk at once, or cancelling its run drops it.
        GenerationChunk.objects.filter(
            pk=chunk.pk, state=ChunkState.RUNNING, attempts=chunk.attempts
        ).update(lease_expires_at=timezone.now())
        raise
    except Exception as error:
        logger.exception("chunk %s of run %s failed", chunk.index, chunk.run_id)
        _finish(chunk, state=ChunkState.FAILED, error=f"{type(error).__name__}: {error}")
        raise
    _finish(chunk, state=ChunkState.DONE, stored=summary.stored, outcomes=summary.outcomes)
    requeue_stale_chunks(run=chunk.run)
    return "done"


def requeue_stale_chunks(*, run: GenerationRun | None = None) -> int:
    """Queue again the chunks whose worker stopped holding them (expired lease)."""
    from cfannotate.candidates.tasks import generate_chunk

    stale = GenerationChunk.objects.filter(
        state=ChunkState.RUNNING, lease_expires_at__lt=timezone.now()
    )
    if run is not None:
        stale = stale.filter(run=run)
    chunk_ids = list(stale.values_list("id", flat=True))
    for chunk_id in chunk_ids:
        generate_chunk.enqueue(chunk_id)
    if chunk_ids:
        logger.warning("re-queued %d chunk(s) whose worker stopped", len(chunk_ids))
    return len(chunk_ids)


@transaction.atomic
def generation_run_cancel(*, run: GenerationRun) -> GenerationRun:
    """Stop a run: queued chunks are dropped, and running ones no worker holds any more
    (an expired lease); a chunk a worker holds finishes and is kept."""
    if run.state not in (RunState.QUEUED, RunState.RUNNING):
        raise Conflict(f"The run is already {run.get_state_display().lower()}.")
    unheld = Q(state=ChunkState.RUNNING, lease_expires_at__lte=timezone.now())
    run.chunks.filter(Q(state=ChunkState.QUEUED) | unheld).update(state=ChunkState.CANCELLED)
    run.state = RunState.CANCELLED
    run.finished_at = timezone.now()
    run.save(update_fields=["state", "finished_at"])
    return run


def generation_run_retry(*, run: GenerationRun) -> int:
    """Queue the failed chunks of a finished run again. Returns how many."""
    from cfannotate.candidates.tasks import generate_chunk

    with transaction.atomic():
        run = GenerationRun.objects.select_for_update().get(pk=run.pk)
        failed = list(run.chunks.filter(state=ChunkState.FAILED).values_list("id", flat=True))
        if not failed:
            raise Conflict("The run has no failed chunks to retry.")
        run.chunks.filter(pk__in=failed).update(state=ChunkState.QUEUED, error="")
        run.chunks_failed = F("chunks_failed") - len(failed)
        run.state = RunState.RUNNING
        run.finished_at = None
        run.save(update_fields=["chunks_failed", "state", "finished_at"])
        transaction.on_commit(lambda: [generate_chunk.enqueue(chunk_id) for chunk_id in failed])
    return len(failed)
