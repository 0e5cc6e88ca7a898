"""Reads of candidates and generation runs."""

from dataclasses import dataclass

from django.db.models import BooleanField, Case, Exists, F, OuterRef, Q, QuerySet, Value, When
from django.utils import timezone

from cfannotate.campaigns.models import Campaign
from cfannotate.candidates.models import Candidate, ChunkState, GenerationRun

# Failed chunks whose messages the progress shows; the rest are counted, not repeated.
FAILURES_SHOWN = 3


@dataclass(frozen=True)
class ChunkFailure:
    chunk: int  # the chunk's index in its run
    error: str  # what failed, e.g. the inference server's own message


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
    failures: tuple[ChunkFailure, ...] = ()  # the first FAILURES_SHOWN failed chunks

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
    failed = run.chunks.filter(state=ChunkState.FAILED).order_by("index")
    failures = tuple(
        ChunkFailure(chunk=index, error=error or "No message was recorded.")
        for index, error in failed.values_list("index", "error")[:FAILURES_SHOWN]
    )
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
        failures=failures,
    )


@dataclass(frozen=True)
class CandidateFilters:
    """What the review page and the API filter candidates by; None or "" means any."""

    generator: str | None = None
    control_code: str | None = None
    status: str | None = None
    source: str | None = None
    min_fluency: float | None = None
    max_fluency: float | None = None
    search: str | None = None
    original: int | None = None
    ordering: str | None = None


def candidates_filtered(campaign: Campaign, filters: CandidateFilters) -> QuerySet[Candidate]:
    """The campaign's candidates under `filters`, with what a review row shows about each:
    its unit (and whether a worker was given it), its gold round, its judgments."""
    from cfannotate.labeling.models import Judgment, Round

    return (
        Candidate.objects.filter(campaign=campaign)
        .by_generator(filters.generator)
        .with_code(filters.control_code)
        .with_status(filters.status)
        .from_source(filters.source)
        .fluency_between(filters.min_fluency, filters.max_fluency)
        .matching(filters.search)
        .of_original(filters.original)
        .ordered(filters.ordering)
        .select_related("original", "intended_label")
        .annotate(
            unit_id=F("unit_item__unit_id"),
            # Case, not the bare condition: without a unit it would be NULL, not False.
            unit_claimed=Case(
                When(
                    Q(unit_item__unit__claims__gt=0)
                    | Exists(Round.objects.filter(unit_id=OuterRef("unit_item__unit_id"))),
                    then=Value(True),
                ),
                default=Value(False),
                output_field=BooleanField(),
            ),
            gold_round_id=F("gold_item__gold_round_id"),
            judged=Exists(Judgment.objects.filter(candidate=OuterRef("pk"))),
        )
    )


def candidate_generators(campaign: Campaign) -> list[str]:
    """The generators that made the campaign's candidates, for the filter's choices."""
    return list(
        Candidate.objects.filter(campaign=campaign)
        .order_by("generator")
        .values_list("generator", flat=True)
        .distinct()
    )
