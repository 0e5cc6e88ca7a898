"""Reads of candidates and generation runs."""

from dataclasses import dataclass

from django.utils import timezone

from cfannotate.campaigns.models import Campaign
from cfannotate.candidates.models import ChunkState, GenerationRun


@dataclass(frozen=True)
class RunProgress:
    run: GenerationRun
    chunks_total: int
    chunks_done: int
    chunks_failed: int
    chunks_running: int
    candidates: int
    seconds: float
    chunks_per_minute: float | None
    eta_seconds: float | None

    @property
    def percent(self) -> int:
        finished = self.chunks_done + self.chunks_failed
        return round(100 * finished / self.chunks_total) if self.chunks_total else 100


def latest_run(campaign: Campaign) -> GenerationRun | None:
    return campaign.runs.order_by("-created_at").first()


def run_progress(run: GenerationRun) -> RunProgress:
    """Chunks and candidates done, the rate so far, and the time left at that rate."""
    running = run.chunks.filter(state=ChunkState.RUNNING).count()
    end = run.finished_at or timezone.now()
    seconds = (end - run.started_at).total_seconds() if run.started_at else 0.0
    finished = run.chunks_done + run.chunks_failed
    rate = finished / seconds * 60 if seconds > 0 and finished else None
    remaining = run.chunks_total - finished
    eta = remaining / rate * 60 if rate and remaining and not run.finished_at else None
    return RunProgress(
        run=run,
        chunks_total=run.chunks_total,
        chunks_done=run.chunks_done,
        chunks_failed=run.chunks_failed,
        chunks_running=running,
        candidates=run.candidates_stored,
        seconds=seconds,
        chunks_per_minute=rate,
        eta_seconds=eta,
    )
