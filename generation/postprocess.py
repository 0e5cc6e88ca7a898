"""What every generator's output goes through: dedupe, edits, control code, relationship,
sanity, fluency.

Polyjuice §3.2 and §4.1: drop copies of x and duplicates, compute the edit between
x and x̂ widened to parse subtrees, detect the primary control code, build r(x̂),
drop x̂ that is broken as a sentence (generation.sanity), and drop x̂ whose
log-probability falls more than the threshold below x on the whole sentence or on
the changed phrase. The parse, edit, code and relationship of
a candidate can run in worker processes while decoding goes on (`Annotator`; see
annotation.md).
"""

import time
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field

from generation import annotation_pool
from generation.annotation_pool import Pair, PairAnnotation, annotate_pairs
from generation.fluency import TOO_LONG, FluencyItem, FluencyScore, fluency_scores, readable
from generation.parsing import ParseCache
from generation.records import CandidateRecord, OriginalRecord
from generation.relationship import Relationship
from generation.sanity import outside_blanks

DEFAULT_FLUENCY_THRESHOLD = 10.0


@dataclass(frozen=True)
class AnnotatedCandidate:
    record: CandidateRecord
    code: str  # primary control code detected on (x, x̂)
    edit: dict  # generation.edits.Edit.to_dict()
    relationship: Relationship
    fluency: FluencyScore | None  # None when fluency was not scored
    # None when kept; else "fluency_full", "fluency_changed", "too_long" (longer than the
    # fluency model reads) or a generation.sanity reason
    dropped_by: str | None = None

    @property
    def kept(self) -> bool:
        return self.dropped_by is None


@dataclass
class PostprocessStats:
    received: int = 0
    duplicates: int = 0
    copies: int = 0
    fluency_dropped: int = 0
    kept: int = 0
    # Candidates dropped after dedupe, by `dropped_by` (sanity reasons and fluency ones):
    # received == duplicates + copies + sum(dropped.values()) + kept.
    dropped: dict[str, int] = field(default_factory=dict)

    @property
    def sanity_dropped(self) -> int:
        return sum(n for reason, n in self.dropped.items() if not reason.startswith("fluency"))


@dataclass
class PostprocessResult:
    candidates: list[AnnotatedCandidate] = field(default_factory=list)
    stats: PostprocessStats = field(default_factory=PostprocessStats)
    # Where `Annotator.finish` spent its time: waiting for the workers' annotations
    # ("pool_wait"), annotating what they did not ("here"), scoring fluency ("fluency");
    # not part of what two results compare on.
    seconds: dict[str, float] = field(default_factory=dict, compare=False)


def normalized_text(text: str) -> str:
    """The form two texts are compared in: lower case, runs of whitespace as one space."""
    return " ".join(text.lower().split())


def dedupe(
    records: list[CandidateRecord], originals: dict[str, OriginalRecord], stats: PostprocessStats
) -> list[CandidateRecord]:
    """One record per (original, text); copies of x removed."""
    seen: set[tuple[str, str]] = set()
    unique = []
    for record in records:
        key = (record.original_key, normalized_text(record.text))
        if key in seen:
            stats.duplicates += 1
            continue
        seen.add(key)
        if key[1] == normalized_text(originals[record.original_key].text):
            stats.copies += 1
            continue
        unique.append(record)
    return unique


def _drop_reason(score: FluencyScore, threshold: float) -> str | None:
    if score.full < -threshold:
        return "fluency_full"
    if score.changed is not None and score.changed < -threshold:
        return "fluency_changed"
    return None


class Annotator:
    """Annotates candidates as they come, in worker processes, and filters them at the end.

    `add` queues the CPU work (parse, edit, control code, relationship) of each new
    (original, text) and returns at once when there are workers; `finish` waits for it,
    dedupes, scores fluency on this process (where `fluency_lm` lives) and returns what
    `annotate` returns. `workers`: processes in the pool (None: `default_workers()`;
    0: all in this process). `sanity`: drop candidates that fail a sanity filter
    (generation.sanity), their fluency unscored; without it the filters never run. A
    run with fewer than `POOL_MIN_PAIRS` distinct pairs never starts the pool. One
    thread calls `add` and `finish`.
    """

    POOL_MIN_PAIRS = 64
    CHUNK_PAIRS = 64  # pairs per task: each worker parses them in one `nlp.pipe` batch

    def __init__(
        self,
        originals: dict[str, OriginalRecord],
        *,
        parses: ParseCache,
        fluency_lm=None,
        threshold: float = DEFAULT_FLUENCY_THRESHOLD,
        batch_size: int = 64,
        workers: int | None = None,
        progress: Callable[[str], None] | None = None,
        sanity: bool = True,
    ) -> None:
        self.originals = originals
        self.sanity = sanity
        self.parses = parses
        self.fluency_lm = fluency_lm
        self.threshold = threshold
        self.batch_size = batch_size
        self.progress = progress
        self.workers = annotation_pool.default_workers() if workers is None else workers
        if self.workers < 0:
            raise ValueError(f"workers must be 0 or more, not {self.workers}.")
        if parses.model is None:
            self.workers = 0  # a pipeline passed in cannot be loaded by another process
        self._records: list[CandidateRecord] = []
        self._queued: set[tuple[str, str]] = set()  # (original key, normalized text)
        self._normalized_originals: dict[str, str] = {}
        self._pending: list[Pair] = []
        self._running: list[tuple[list[Pair], Future]] = []
        self._pooled = False  # whether any chunk went to the pool
        self._done: dict[tuple[str, str], PairAnnotation] = {}  # by (original key, text)

    def expect(self, sequences: int) -> None:
        """Decoding of `sequences` continuations is about to start: when that is enough to
        need the pool, start its workers now, so that they load while decoding runs."""
        if self.workers and self.parses.model is not None and sequences >= self.POOL_MIN_PAIRS:
            annotation_pool.warm(workers=self.workers, model=self.parses.model)

    def add(self, records: list[CandidateRecord]) -> None:
        """Queue records for the CPU work (parse, edit, code, relationship); returns at
        once when workers > 0."""
        self._records.extend(records)
        for record in records:
            original = self.originals[record.original_key]
            normalized = normalized_text(record.text)
            key = (record.original_key, normalized)
            if key in self._queued or normalized == self._normalized(original):
                continue  # a repeat, or a copy of x: `finish` drops it without annotating
            self._queued.add(key)
            self._pending.append(Pair(record.original_key, original.text, record.text))
        self._send(final=False)

    def finish(self, records: list[CandidateRecord] | None = None) -> PostprocessResult:
        """Wait for the CPU work, then dedupe `records` (default: everything added, in the
        order added), score fluency in batches on this process, and return exactly what
        `annotate(records, ...)` returns, in the same order."""
        records = self._records if records is None else records
        result = PostprocessResult()
        stats = result.stats
        stats.received = len(records)
        mark = time.perf_counter()

        # 1. The rest of the queue, then every chunk the workers have.
        self._send(final=True)
        self._collect()
        result.seconds["pool_wait"], mark = _since(mark)

        # 2. Dedupe and drop copies of x, over the final order of the records.
        unique = dedupe(records, self.originals, stats)

        # 3. Edit, code and relationship of each, computed once per (original, text).
        # A repeat that `dedupe` keeps in another case or spacing than the text queued
        # first (records added out of order) is annotated here.
        missing = list(
            dict.fromkeys(
                Pair(r.original_key, self.originals[r.original_key].text, r.text)
                for r in unique
                if (r.original_key, r.text) not in self._done
            )
        )
        self._annotate_here(missing)
        annotated = [(record, self._done[(record.original_key, record.text)]) for record in unique]
        result.seconds["here"], mark = _since(mark)
        if self.progress:
            self.progress("parsed")

        # 4. Sanity: a candidate broken as a sentence is dropped without a fluency score.
        reasons = [
            (outside_blanks(record) or annotation.sanity) if self.sanity else None
            for record, annotation in annotated
        ]

        # 5. Fluency of x̂ against x, on the sentence and on each changed phrase; where
        #    x̂ or x is longer than the fluency model reads, x̂ is dropped unscored.
        scores: list[FluencyScore | None] = [None] * len(annotated)
        if self.fluency_lm is not None and annotated:
            self._drop_unreadable([record for record, _ in annotated], reasons)
        to_score = [i for i, reason in enumerate(reasons) if reason is None]
        if self.fluency_lm is not None and annotated:
            items = [
                FluencyItem(
                    original=self.originals[annotated[i][0].original_key].text,
                    candidate=annotated[i][0].text,
                    phrases=annotated[i][1].phrases,
                )
                for i in to_score
            ]
            scored = (
                fluency_scores(self.fluency_lm, items, batch_size=self.batch_size) if items else []
            )
            for i, score in zip(to_score, scored, strict=True):
                scores[i] = score
            if self.progress:
                self.progress("scored")
        result.seconds["fluency"], mark = _since(mark)

        for (record, annotation), reason, score in zip(annotated, reasons, scores, strict=True):
            dropped_by = reason
            if dropped_by is None and score is not None:
                dropped_by = _drop_reason(score, self.threshold)
                if dropped_by:
                    stats.fluency_dropped += 1
            if dropped_by:
                stats.dropped[dropped_by] = stats.dropped.get(dropped_by, 0) + 1
            else:
                stats.kept += 1
            result.candidates.append(
                AnnotatedCandidate(
                    record=record,
                    code=annotation.code,
                    edit=annotation.edit,
                    relationship=annotation.relationship,
                    fluency=score,
                    dropped_by=dropped_by,
                )
            )
        return result

    def _drop_unreadable(self, records: list[CandidateRecord], reasons: list) -> None:
        """Sets the reason of each record not yet dropped whose text, or its original's,
        the fluency model cannot read whole to TOO_LONG."""
        waiting = [i for i, reason in enumerate(reasons) if reason is None]
        keys = list(dict.fromkeys(records[i].original_key for i in waiting))
        texts = [records[i].text for i in waiting] + [self.originals[k].text for k in keys]
        fits = readable(self.fluency_lm, texts)
        original_fits = dict(zip(keys, fits[len(waiting) :], strict=True))
        for i, fit in zip(waiting, fits[: len(waiting)], strict=True):
            if not (fit and original_fits[records[i].original_key]):
                reasons[i] = TOO_LONG

    def _normalized(self, original: OriginalRecord) -> str:
        if original.key not in self._normalized_originals:
            self._normalized_originals[original.key] = normalized_text(original.text)
        return self._normalized_originals[original.key]

    def _send(self, *, final: bool) -> None:
        """Hand full chunks of the queue to the pool (all of it when `final`), or annotate
        them here when there is no pool or, by the end, too little work to start one."""
        pending = self._pending
        if self.workers == 0:
            if final or len(pending) >= self.CHUNK_PAIRS:
                self._annotate_here(pending)
                self._pending = []
            return
        queued = len(self._queued)
        if not self._pooled and queued < self.POOL_MIN_PAIRS:
            if final:
                self._annotate_here(pending)
                self._pending = []
            return
        # At the end, split what is left over all the workers.
        size = -(-len(pending) // self.workers) if final else self.CHUNK_PAIRS
        size = max(1, min(size, self.CHUNK_PAIRS))
        while pending and (final or len(pending) >= size):
            chunk, pending = pending[:size], pending[size:]
            future = annotation_pool.submit(
                chunk, workers=self.workers, model=self.parses.model, sanity=self.sanity
            )
            self._running.append((chunk, future))
            self._pooled = True
        self._pending = pending

    def _collect(self) -> None:
        """Wait for every chunk sent; a worker's error is raised here, as it was raised."""
        running, self._running = self._running, []
        try:
            for chunk, future in running:
                self._store(chunk, future.result())
        except BaseException as error:
            for _, future in running:
                future.cancel()
            if isinstance(error, BrokenProcessPool):
                annotation_pool.shutdown(wait=False)  # the next run starts a fresh pool
            raise

    def _annotate_here(self, pairs: list[Pair]) -> None:
        if not pairs:
            return
        model = self.parses.model
        parse_candidates = (
            annotation_pool.batch_parser(annotation_pool.annotation_nlp(model))
            if model is not None
            else self.parses.parse_many
        )
        for start in range(0, len(pairs), annotation_pool.PARSE_BATCH):
            chunk = pairs[start : start + annotation_pool.PARSE_BATCH]
            self._store(
                chunk,
                annotate_pairs(
                    chunk,
                    parse_originals=self.parses.parse_many,
                    parse_candidates=parse_candidates,
                    sanity=self.sanity,
                ),
            )

    def _store(self, pairs: list[Pair], annotations: list[PairAnnotation]) -> None:
        for pair, annotation in zip(pairs, annotations, strict=True):
            self._done[(pair.base, pair.candidate)] = annotation


def _since(mark: float) -> tuple[float, float]:
    """(seconds since `mark`, now)."""
    now = time.perf_counter()
    return now - mark, now


def annotate(
    records: list[CandidateRecord],
    originals: dict[str, OriginalRecord],
    *,
    parses: ParseCache,
    fluency_lm=None,
    threshold: float = DEFAULT_FLUENCY_THRESHOLD,
    batch_size: int = 64,
    progress: Callable[[str], None] | None = None,
    workers: int | None = 0,
    sanity: bool = True,
) -> PostprocessResult:
    """Dedupe and annotate candidates; mark the ones that fail a sanity filter dropped
    (unless `sanity=False`), and with `fluency_lm` the disfluent ones.

    In this process unless `workers` asks for a pool (None: `default_workers()`): a web
    request importing candidates must not start processes; generation runs do.
    """
    annotator = Annotator(
        originals,
        parses=parses,
        fluency_lm=fluency_lm,
        threshold=threshold,
        batch_size=batch_size,
        workers=workers,
        progress=progress,
        sanity=sanity,
    )
    annotator.add(records)
    return annotator.finish()
