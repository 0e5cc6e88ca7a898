"""Reads of candidates and generation runs."""

from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from django.db.models import (
    BooleanField,
    Case,
    Count,
    Exists,
    F,
    OuterRef,
    Q,
    QuerySet,
    Value,
    When,
)
from django.db.models.fields.json import KeyTextTransform
from django.utils import timezone

from cfannotate.campaigns.models import Campaign, Original
from cfannotate.candidates import adapter
from cfannotate.candidates.models import (
    Candidate,
    CandidateSource,
    CandidateStatus,
    ChunkState,
    ControlCode,
    GenerationChunk,
    GenerationRun,
    RunState,
)
from cfannotate.core.exceptions import NotFound
from cfannotate.core.pagination import IdsThenRows, rows_in_order

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
    eta_seconds: float | None  # the same figure as seconds_left (its first name)
    failures: tuple[ChunkFailure, ...] = ()  # the first FAILURES_SHOWN failed chunks
    # Originals of the run's chunks (cancelled ones left out) and how many are done:
    # finished chunks whole, running ones as far as their worker has reported.
    originals_total: int = 0
    originals_done: int = 0
    originals_cancelled: int = 0  # of the chunks a cancel dropped before a worker took them
    seconds_left: float | None = None  # at the rate of originals so far; None: not known
    # Chunks of a cancelled run that a worker still holds (lease not expired): they finish
    # and keep their candidates, so the page keeps watching until they end.
    chunks_finishing: int = 0

    @property
    def percent(self) -> int:
        if self.originals_total:
            return round(100 * self.originals_done / self.originals_total)
        finished = self.chunks_done + self.chunks_failed
        return round(100 * finished / self.chunks_total) if self.chunks_total else 100

    @property
    def active(self) -> bool:
        """Queued, running, or cancelled with chunks still finishing: the page keeps polling."""
        return self.run.state in (RunState.QUEUED, RunState.RUNNING) or self.chunks_finishing > 0


def latest_run(campaign: Campaign) -> GenerationRun | None:
    return campaign.runs.order_by("-created_at").first()


def generation_run_get(*, campaign: Campaign, run_id: int) -> GenerationRun:
    """A generation run of the campaign; NotFound for any other id."""
    run = campaign.runs.filter(pk=run_id).first()
    if run is None:
        raise NotFound(f"No generation run {run_id} in this campaign.")
    return run


def run_progress(run: GenerationRun) -> RunProgress:
    """Chunks, originals and candidates done, the rate so far, and the time left at that
    rate (of originals, so that it moves within a chunk; workers report about every second).
    """
    running = held = 0
    originals_total = originals_done = originals_cancelled = 0
    now = timezone.now()
    for state, original_ids, done, lease in run.chunks.values_list(
        "state", "original_ids", "originals_done", "lease_expires_at"
    ):
        if state == ChunkState.CANCELLED:
            originals_cancelled += len(original_ids)
            continue
        originals_total += len(original_ids)
        if state in (ChunkState.DONE, ChunkState.FAILED):
            originals_done += len(original_ids)
        elif state == ChunkState.RUNNING:
            running += 1
            held += lease is not None and lease > now
            originals_done += min(done, len(original_ids))
    end = run.finished_at or now
    seconds = (end - run.started_at).total_seconds() if run.started_at else 0.0
    finished = run.chunks_done + run.chunks_failed
    rate = finished / seconds * 60 if seconds > 0 and finished else None
    left = None
    remaining = originals_total - originals_done
    if run.state == RunState.RUNNING and seconds > 0 and originals_done and remaining > 0:
        left = remaining * seconds / originals_done
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
        eta_seconds=left,
        failures=failures,
        originals_total=originals_total,
        originals_done=originals_done,
        originals_cancelled=originals_cancelled,
        seconds_left=left,
        chunks_finishing=held if run.state == RunState.CANCELLED else 0,
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


def _related_model(model, *path: str):
    """The model at the end of a relation path from `model`, e.g. Candidate → unit_item → unit."""
    for name in path:
        model = model._meta.get_field(name).related_model
    return model


def _candidates_matching(campaign: Campaign, filters: CandidateFilters) -> QuerySet[Candidate]:
    """The campaign's candidates under `filters`, in the order they ask for; no more columns."""
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
    )


def candidates_filtered(campaign: Campaign, filters: CandidateFilters) -> QuerySet[Candidate]:
    """The campaign's candidates under `filters`, with what a review row shows about each:
    its unit (and whether a worker was given it), its gold round, its judgments.

    Units, rounds and judgments are labeling's models: they are reached through the
    relations labeling declares on Candidate, not imported (labeling sits above).
    """
    return _review_columns(_candidates_matching(campaign, filters))


def candidates_paged(campaign: Campaign, filters: CandidateFilters) -> IdsThenRows:
    """`candidates_filtered` for a paginator: a page's ids are sorted and skipped to on
    the narrow candidate rows (an index serves the default order), then only that page's
    rows are read with their joins (`cfannotate.core.pagination`)."""
    matching = _candidates_matching(campaign, filters)
    return IdsThenRows(matching, rows_in_order(_review_columns(matching)))


def _review_columns(candidates: QuerySet[Candidate]) -> QuerySet[Candidate]:
    """What a review row shows beyond the candidate's own columns (`candidates_filtered`)."""
    unit_model = _related_model(Candidate, "unit_item", "unit")
    rounds = _related_model(unit_model, "rounds")
    judgments = _related_model(Candidate, "judgments")
    return candidates.select_related(
        "original__label", "intended_label", "predicted_label"
    ).annotate(
        unit_id=F("unit_item__unit_id"),
        # Case, not the bare condition: without a unit it would be NULL, not False.
        unit_claimed=Case(
            When(
                Q(unit_item__unit__claims__gt=0)
                | Exists(rounds.objects.filter(unit_id=OuterRef("unit_item__unit_id"))),
                then=Value(True),
            ),
            default=Value(False),
            output_field=BooleanField(),
        ),
        gold_round_id=F("gold_item__gold_round_id"),
        judged=Exists(judgments.objects.filter(candidate=OuterRef("pk"))),
    )


def candidate_generators(campaign: Campaign) -> list[str]:
    """The generators that made the campaign's candidates, for the filter's choices."""
    return list(
        Candidate.objects.filter(campaign=campaign)
        .order_by("generator")
        .values_list("generator", flat=True)
        .distinct()
    )


# --------------------------------------------------------------------------- per original

# Candidates that passed the filters and were not rejected: what labeling can use.
USABLE = (CandidateStatus.GENERATED, CandidateStatus.SELECTED, CandidateStatus.GOLD)
# Generated `global` rewrites are never selected (labeling.units): not usable, counted
# apart. `OriginalGeneration.kept` counts the rest of USABLE, as KEPT does in SQL.
REWRITE = Q(
    status=CandidateStatus.GENERATED,
    control_code=ControlCode.GLOBAL,
    source=CandidateSource.GENERATED,
)
KEPT = Q(status__in=USABLE) & ~REWRITE
# Originals per query when `generation_status` is given ids: the IN list stays short
# (SQLite limits a query's parameters) however many originals the overview lists.
IDS_PER_QUERY = 500
# How long a failed chunk's message may be in a `why`.
WHY_ERROR_CHARS = 200


class GenerationState:
    """Where an original stands with generation, from its latest chunk."""

    NOT_GENERATED = "not_generated"  # in no chunk that finished or is under way
    GENERATING = "generating"  # its latest chunk is queued or running
    FAILED = "failed"  # its latest chunk failed
    GENERATED = "generated"  # its latest chunk finished


@dataclass(frozen=True)
class DropCount:
    reason: str  # the candidates' metadata["dropped_by"]
    label: str  # in words (adapter.DROP_REASON_LABELS)
    short: str  # in a word or two (adapter.DROP_REASON_SHORT)
    count: int


@dataclass(frozen=True)
class SkipReason:
    generator: str
    reason: str  # why the generator could not perturb the original
    # The generator does not convert the original's label (generation.generators.Skipped):
    # nothing was tried, so the review page's header leaves it out; `why` still says it.
    not_for_label: bool = False


@dataclass(frozen=True)
class OriginalGeneration:
    """What generation made of one original: kept, dropped by each filter, selected, and
    when nothing usable came out, why in one sentence."""

    original: Original
    state: str  # a GenerationState
    kept: int  # passed every filter and not rejected: generated, selected or gold
    gold: int  # of those, gold and training rounds' answers (written, not generated)
    # Generated `global` rewrites: passed the filters but too far from x to be
    # counterfactuals (A.2), so selection never shows them; not counted in `kept`.
    rewrites: int
    selected: int  # of those, selected for labeling
    rejected: int  # passed the filters, rejected in review
    dropped: tuple[DropCount, ...]  # by reason, most first
    skipped: tuple[SkipReason, ...]  # generators that made nothing of it, in the last run
    made: int | None  # distinct candidates its last finished chunk made; None: not recorded
    why: str  # "" when some candidates were kept

    @property
    def filtered(self) -> int:
        return sum(drop.count for drop in self.dropped)

    @property
    def header(self) -> str:
        """e.g. "7 kept · 3 cut off · 2 fluency · 3 selected" (fluency reasons as one)."""
        shorts: Counter[str] = Counter()
        for drop in self.dropped:
            shorts[drop.short] += drop.count
        parts = [f"{self.kept} kept"]
        if self.rewrites:
            parts.append(f"{self.rewrites} too far to label")
        ranked = sorted(shorts.items(), key=lambda item: (-item[1], item[0]))
        parts += [f"{count} {short}" for short, count in ranked]
        parts.append(f"{self.selected} selected")
        if self.rejected:
            parts.append(f"{self.rejected} rejected")
        tried = [item.generator for item in self.skipped if not item.not_for_label]
        if tried:
            parts.append("not perturbed by " + ", ".join(dict.fromkeys(tried)))
        return " · ".join(parts)


@dataclass(frozen=True)
class GenerationOverview:
    """The campaign page's summary: originals with usable candidates and those without."""

    originals: int
    with_kept: int  # with usable candidates other than gold and training rounds' answers
    # Never generated for, and holding only gold and training rounds' answers: the
    # originals of those rounds, counted apart so that the three counts add up.
    gold_only: int
    without: tuple[OriginalGeneration, ...]  # generated, but no usable candidate, and why
    pending: int  # not generated yet, or being generated: the Generate button's work
    begun: bool  # some original was generated or has candidates: there is something to say
    not_generated_ids: tuple[int, ...]  # never generated and without candidates
    # Some original was generated for, or has candidates other than gold rounds' answers:
    # the page then offers the originals not generated yet apart from all of them again.
    generated_any: bool

    @property
    def without_ids(self) -> list[int]:
        return [status.original.pk for status in self.without]


# What `global` rewrites did, in a `why` ("all 4 rewrote too much ...").
REWRITE_PHRASE = "rewrote too much of the original to be a counterfactual"
# The key `generation_status` counts those rewrites under, beside the statuses.
_REWRITE = "rewrite"


def _why_phrase(reason: str) -> str:
    # Both fluency reasons are one filter to the researcher.
    if reason.startswith("fluency"):
        return "failed the fluency filter"
    return adapter.DROP_REASON_LABELS.get(reason, reason.replace("_", " "))


def _dropped_sentence(dropped: Iterable[DropCount], rejected: int, rewrites: int = 0) -> str:
    """e.g. "all 18 failed the fluency filter", "12 cut off mid-sentence, 6 failed ..."."""
    phrases: Counter[str] = Counter()
    if rewrites:
        phrases[REWRITE_PHRASE] += rewrites
    for drop in dropped:
        phrases[_why_phrase(drop.reason)] += drop.count
    if rejected:
        phrases["rejected in review"] += rejected
    ranked = sorted(phrases.items(), key=lambda item: (-item[1], item[0]))
    if len(ranked) == 1:
        phrase, count = ranked[0]
        return f"all {count} {phrase}" if count > 1 else f"its one candidate: {phrase}"
    return ", ".join(f"{count} {phrase}" for phrase, count in ranked)


def _skipped_sentence(skipped: tuple[SkipReason, ...]) -> str:
    """e.g. "not perturbed: matches none of the slices preposition"."""
    if len({item.generator for item in skipped}) == 1:
        return "not perturbed: " + "; ".join(dict.fromkeys(item.reason for item in skipped))
    return "not perturbed: " + "; ".join(f"{item.reason} ({item.generator})" for item in skipped)


def _why(
    state: str,
    dropped: tuple[DropCount, ...],
    rejected: int,
    skipped: tuple[SkipReason, ...],
    made: int | None,
    error: str,
    rewrites: int = 0,
) -> str:
    """One sentence on why an original has no usable candidate."""
    if state == GenerationState.GENERATING:
        return "being generated now"
    parts = []
    if dropped or rejected or rewrites:
        parts.append(_dropped_sentence(dropped, rejected, rewrites))
    if skipped:
        parts.append(_skipped_sentence(skipped))
    if parts:
        return "; ".join(parts)
    if state == GenerationState.FAILED:
        return f"generation failed: {error[:WHY_ERROR_CHARS] or 'no message was recorded'}"
    if state == GenerationState.NOT_GENERATED:
        return "not generated yet"
    if made == 0:
        return (
            "nothing usable came out: every continuation was malformed, "
            "a duplicate or a copy of the original"
        )
    return "generated, but no candidate is stored for it"


def _chunks_in_order(campaign: Campaign, *fields: str) -> QuerySet:
    """(original_ids, state, *fields) of the campaign's chunks, in the order they were created."""
    return (
        GenerationChunk.objects.filter(run__campaign=campaign)
        .order_by("run__created_at", "run_id", "index")
        .values_list("original_ids", "state", *fields)
    )


# An original's GenerationState from the state of its latest chunk (not cancelled).
_STATE_OF_CHUNK = {
    ChunkState.DONE: GenerationState.GENERATED,
    ChunkState.QUEUED: GenerationState.GENERATING,
    ChunkState.RUNNING: GenerationState.GENERATING,
    ChunkState.FAILED: GenerationState.FAILED,
}


def _chunk_states(campaign: Campaign) -> dict[int, str]:
    """By original id, its state as `_chunk_records` gives it, without reading what the
    chunks recorded; cancelled chunks change nothing."""
    states: dict[int, str] = {}
    for original_ids, state in _chunks_in_order(campaign):
        if state in _STATE_OF_CHUNK:
            states.update(dict.fromkeys(original_ids, _STATE_OF_CHUNK[state]))
    return states


def _chunk_records(campaign: Campaign) -> dict[int, tuple[str, dict | None, str]]:
    """By original id: (state, what its last finished chunk recorded, the failure message),
    from its chunks in the order they were created; cancelled chunks change nothing."""
    found: dict[int, tuple[str, dict | None, str]] = {}
    for original_ids, state, outcomes, error in _chunks_in_order(campaign, "outcomes", "error"):
        for original_id in original_ids:
            _, recorded, _ = found.get(original_id, (None, None, ""))
            if state == ChunkState.DONE:
                found[original_id] = (
                    GenerationState.GENERATED,
                    outcomes.get(str(original_id)),
                    "",
                )
            elif state in (ChunkState.QUEUED, ChunkState.RUNNING):
                found[original_id] = (GenerationState.GENERATING, recorded, "")
            elif state == ChunkState.FAILED:
                found[original_id] = (GenerationState.FAILED, recorded, error)
    return found


def generation_status(
    campaign: Campaign, *, original_ids: Iterable[int] | None = None
) -> list[OriginalGeneration]:
    """Per original of the campaign (or of `original_ids`), in id order: candidates kept,
    dropped by each filter, selected, the generators that skipped it, and `why` when none
    was kept. Dropped candidates are stored (status FILTERED, metadata["dropped_by"]);
    what is not stored (skips, how many candidates came out) the chunks recorded.

    Every original's status is a GROUP BY over all the campaign's candidates: pass the
    `original_ids` of a page (`generation_status_paged`) rather than slicing the whole."""
    if original_ids is None:
        return _statuses(campaign, _chunk_records(campaign), None)
    ids = sorted(set(original_ids))
    if not ids:
        return []
    chunks = _chunk_records(campaign)
    return [
        status
        for start in range(0, len(ids), IDS_PER_QUERY)
        for status in _statuses(campaign, chunks, ids[start : start + IDS_PER_QUERY])
    ]


def generation_status_paged(campaign: Campaign, *, empty: bool = False) -> IdsThenRows:
    """`generation_status` for a paginator: a page of the originals' ids (in id order; with
    `empty`, of those with no kept candidate) first, then that page's statuses alone."""
    originals = campaign.originals.order_by("id")
    if empty:
        kept = Candidate.objects.filter(KEPT, campaign=campaign, original=OuterRef("pk"))
        originals = originals.filter(~Exists(kept))
    return IdsThenRows(originals, lambda ids: generation_status(campaign, original_ids=ids))


def _statuses(
    campaign: Campaign,
    chunks: dict[int, tuple[str, dict | None, str]],
    original_ids: list[int] | None,
) -> list[OriginalGeneration]:
    originals = campaign.originals.order_by("id").only("id", "external_id", "text", "campaign")
    candidates = Candidate.objects.filter(campaign=campaign)
    if original_ids is not None:
        originals = originals.filter(pk__in=original_ids)
        candidates = candidates.filter(original_id__in=original_ids)
    counts: dict[int, Counter] = defaultdict(Counter)
    drops: dict[int, Counter] = defaultdict(Counter)
    rows = (
        candidates.order_by()  # the model's ordering would split the groups
        .values(
            "original_id",
            "status",
            "control_code",
            "source",
            reason=KeyTextTransform("dropped_by", "metadata"),
        )
        .annotate(count=Count("id"))
    )
    for row in rows:
        # Generated `global` rewrites are never selected (labeling.units): not usable.
        rewrite = (
            row["status"] == CandidateStatus.GENERATED
            and row["control_code"] == ControlCode.GLOBAL
            and row["source"] == CandidateSource.GENERATED
        )
        counts[row["original_id"]][_REWRITE if rewrite else row["status"]] += row["count"]
        if row["status"] == CandidateStatus.FILTERED:
            drops[row["original_id"]][row["reason"] or "filtered"] += row["count"]
    statuses = []
    for original in originals:
        state, recorded, error = chunks.get(original.pk, (GenerationState.NOT_GENERATED, None, ""))
        by_status = counts[original.pk]
        kept = sum(by_status[status] for status in USABLE)
        dropped = tuple(
            DropCount(
                reason=reason,
                label=adapter.DROP_REASON_LABELS.get(reason, reason.replace("_", " ")),
                short=adapter.DROP_REASON_SHORT.get(reason, reason.replace("_", " ")),
                count=count,
            )
            for reason, count in sorted(drops[original.pk].items(), key=lambda i: (-i[1], i[0]))
        )
        skipped = tuple(
            SkipReason(
                generator=item["generator"],
                reason=item["reason"],
                not_for_label=bool(item.get("not_for_label")),
            )
            for item in (recorded or {}).get("skipped", [])
        )
        made = recorded.get("made") if recorded else None
        rejected, rewrites = by_status[CandidateStatus.REJECTED], by_status[_REWRITE]
        statuses.append(
            OriginalGeneration(
                original=original,
                state=state,
                kept=kept,
                gold=by_status[CandidateStatus.GOLD],
                rewrites=rewrites,
                selected=by_status[CandidateStatus.SELECTED],
                rejected=rejected,
                dropped=dropped,
                skipped=skipped,
                made=made,
                why="" if kept else _why(state, dropped, rejected, skipped, made, error, rewrites),
            )
        )
    return statuses


def generation_overview(campaign: Campaign) -> GenerationOverview:
    """The summary counted per original from one GROUP BY of the candidates (kept, gold,
    dropped or rejected: `candidate_campaign_original` answers it without reading the
    candidate rows) and the chunks' states. Only the originals generation left without a
    usable candidate get a whole `OriginalGeneration` (the page lists them, with why);
    building one for every original took 1.3 s and 100 MB per load of 20,000 originals."""
    states = _chunk_states(campaign)
    tallies = {
        original_id: (kept, gold, dropped)
        for original_id, kept, gold, dropped in (
            Candidate.objects.filter(campaign=campaign)
            .order_by()  # the model's ordering would split the groups
            .values("original_id")
            .annotate(
                kept=Count("pk", filter=KEPT),
                gold=Count("pk", filter=Q(status=CandidateStatus.GOLD)),
                dropped=Count(
                    "pk",
                    filter=Q(status__in=(CandidateStatus.FILTERED, CandidateStatus.REJECTED)),
                ),
            )
            .values_list("original_id", "kept", "gold", "dropped")
        )
    }
    originals = with_kept = gold_only = pending = 0
    begun = generated_any = False
    not_generated: list[int] = []
    without: list[int] = []
    for original_id in campaign.originals.order_by("id").values_list("id", flat=True):
        originals += 1
        state = states.get(original_id, GenerationState.NOT_GENERATED)
        kept, gold, dropped = tallies.get(original_id, (0, 0, 0))
        generated = state != GenerationState.NOT_GENERATED
        touched = bool(generated or kept or dropped)
        begun = begun or touched
        generated_any = generated_any or generated
        if kept:
            # Never generated for, and holding only gold and training rounds' answers.
            only_gold = not generated and kept == gold
            gold_only += only_gold
            with_kept += not only_gold
        elif state == GenerationState.GENERATING or not touched:
            pending += 1
            if not generated:
                not_generated.append(original_id)
        else:
            without.append(original_id)
    return GenerationOverview(
        originals=originals,
        with_kept=with_kept,
        gold_only=gold_only,
        without=tuple(generation_status(campaign, original_ids=without)),
        pending=pending,
        begun=begun,
        not_generated_ids=tuple(not_generated),
        generated_any=generated_any
        or campaign.candidates.exclude(status=CandidateStatus.GOLD).exists(),
    )


def candidate_counts(campaign: Campaign) -> dict[str, int]:
    """The campaign's candidates, and how many of them are gold and training rounds'
    answers (the review page lists those too), in one query."""
    return Candidate.objects.filter(campaign=campaign).aggregate(
        candidates=Count("id"), gold_answers=Count("id", filter=Q(status=CandidateStatus.GOLD))
    )


def recent_candidates(campaign: Campaign, limit: int = 50):
    """The campaign's candidates with their originals, by original as the review page
    orders them (`CandidateQuerySet.ORDERINGS["original"]`: what workers are shown first,
    then the other kept edits, `global` rewrites, what was filtered or rejected). Ordering
    by fluency alone put short, generic rewrites ("The movie was disappointing.") at the
    top of the campaign page."""
    return (
        Candidate.objects.filter(campaign=campaign).select_related("original").ordered(None)[:limit]
    )


def candidate_texts(campaign: Campaign) -> QuerySet:
    """Every candidate's id, text and original's external id, in id order: what a researcher
    runs a model on to upload predictions (`predictions.candidate_predictions_upload`)."""
    return (
        Candidate.objects.filter(campaign=campaign)
        .order_by("id")
        .values("id", "text", "original__external_id")
    )
