"""Annotates (x, x̂) pairs with their edit, control code and relationship, in this process
or in a pool of worker processes that works while the main process decodes.

A worker loads spaCy once and keeps the parses of the originals it has seen; it gets
pairs of texts in chunks and sends back plain records, never spaCy objects. See
annotation.md.
"""

import multiprocessing
import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import NamedTuple

from spacy.language import Language
from spacy.tokens import Doc

from generation.control_codes import detect_code
from generation.edits import Bounds, compute_edit
from generation.parsing import SPACY_MODEL, load_nlp
from generation.relationship import Relationship, relationship_of
from generation.sanity import pair_sanity_reason

# Edits, control codes and relationships never read named entities, and the entity
# recognizer (it runs its own tok2vec) is a third to a half of the cost of a parse.
UNUSED_COMPONENTS = ("ner",)
WORKERS_VARIABLE = "CFANNOTATE_ANNOTATION_WORKERS"
MAX_WORKERS_BY_DEFAULT = 4
# Texts per `nlp.pipe` batch: larger batches cost as much per text and need more memory.
PARSE_BATCH = 256
# Originals a worker keeps parsed; past this it forgets them all and starts again.
WORKER_ORIGINALS = 4096


class Pair(NamedTuple):
    """One candidate x̂ of the original keyed `base`, as texts."""

    base: str
    original: str
    candidate: str


@dataclass(frozen=True)
class PairAnnotation:
    """What annotation finds for one pair: small, picklable, no spaCy objects."""

    edit: dict  # generation.edits.Edit.to_dict()
    code: str
    relationship: Relationship
    phrases: tuple[tuple[Bounds, Bounds], ...]  # (source_chars, target_chars) of each op
    # The first sanity filter x̂ fails that reads only the parses (generation.sanity),
    # or None (also when the filters were not asked for); `Annotator.finish` adds the
    # one that reads the record's prompt.
    sanity: str | None = None


def annotation_nlp(model: str = SPACY_MODEL) -> Language:
    """The pipeline `model` without the components annotation never reads."""
    return load_nlp(model, exclude=UNUSED_COMPONENTS)


def default_workers() -> int:
    """Worker processes when none are asked for: the environment's choice, else up to 4,
    or half the cores on a machine with more than 8 (a GPU machine's decoding can finish
    thousands of candidates at once, and four workers then keep it waiting)."""
    value = os.environ.get(WORKERS_VARIABLE, "").strip()
    if not value:
        cores = os.cpu_count() or 1
        return min(max(MAX_WORKERS_BY_DEFAULT, cores // 2), cores)
    try:
        workers = int(value)
    except ValueError:
        workers = -1
    if workers < 0:
        raise ValueError(f"{WORKERS_VARIABLE} must be a whole number >= 0, not {value!r}.")
    return workers


def annotate_pair(base: str, x: Doc, x_hat: Doc, *, sanity: bool = True) -> PairAnnotation:
    """Edit ops widened to subtrees, primary control code, r(x̂) and, with `sanity`, the
    sanity filters of one parsed pair (a run without them never reads their reason)."""
    edit = compute_edit(x, x_hat)
    code = detect_code(x, x_hat, edit)
    return PairAnnotation(
        edit=edit.to_dict(),
        code=code,
        relationship=relationship_of(base, x, x_hat, edit, code),
        phrases=tuple((op.source_chars, op.target_chars) for op in edit.ops),
        sanity=pair_sanity_reason(x, x_hat, edit) if sanity else None,
    )


def annotate_pairs(
    pairs: Sequence[Pair],
    *,
    parse_originals: Callable[[list[str]], list[Doc]],
    parse_candidates: Callable[[list[str]], list[Doc]],
    sanity: bool = True,
) -> list[PairAnnotation]:
    """Annotate `pairs`, each distinct text parsed once, in one batch per side (`sanity`:
    as `annotate_pair`'s)."""
    originals = list(dict.fromkeys(pair.original for pair in pairs))
    candidates = list(dict.fromkeys(pair.candidate for pair in pairs))
    x_docs = dict(zip(originals, parse_originals(originals), strict=True))
    x_hat_docs = dict(zip(candidates, parse_candidates(candidates), strict=True))
    return [
        annotate_pair(pair.base, x_docs[pair.original], x_hat_docs[pair.candidate], sanity=sanity)
        for pair in pairs
    ]


def batch_parser(nlp: Language) -> Callable[[list[str]], list[Doc]]:
    """Parse texts with `nlp.pipe`, in batches of at most `PARSE_BATCH`."""
    return lambda texts: list(nlp.pipe(texts, batch_size=PARSE_BATCH))


# --- In each worker process --------------------------------------------------------

_worker_nlp: Language | None = None
_worker_originals: dict[str, Doc] = {}


def _start_worker(model: str) -> None:
    global _worker_nlp
    _worker_nlp = annotation_nlp(model)


def _parse_worker_originals(texts: list[str]) -> list[Doc]:
    missing = [text for text in texts if text not in _worker_originals]
    if len(_worker_originals) + len(missing) > WORKER_ORIGINALS:
        _worker_originals.clear()
        missing = texts
    _worker_originals.update(zip(missing, batch_parser(_worker_nlp)(missing), strict=True))
    return [_worker_originals[text] for text in texts]


def _annotate_chunk(pairs: list[Pair], sanity: bool) -> list[PairAnnotation]:
    return annotate_pairs(
        pairs,
        parse_originals=_parse_worker_originals,
        parse_candidates=batch_parser(_worker_nlp),
        sanity=sanity,
    )


def worker_nlp() -> Language:
    """The spaCy pipeline of the worker process this runs in (for other work sent to the
    pool with `submit_call`)."""
    if _worker_nlp is None:
        raise RuntimeError("worker_nlp() is only for functions running in the pool's workers")
    return _worker_nlp


def _ready() -> bool:
    """A task that only waits for the worker's start (its spaCy pipeline loaded)."""
    return _worker_nlp is not None


# --- In the main process -----------------------------------------------------------

_pool: ProcessPoolExecutor | None = None
_pool_shape: tuple[int, str] | None = None  # (workers, model) of `_pool`
_pool_lock = threading.Lock()


def _executor(workers: int, model: str) -> ProcessPoolExecutor:
    """The process pool, made on first use and kept for the life of this process (a run
    that asks for another number of workers replaces it once the chunks sent are done)."""
    global _pool, _pool_shape
    if _pool is not None and _pool_shape != (workers, model):
        _stop_pool(cancel=False)
    if _pool is None:
        # Workers are forked from a fresh interpreter (the fork server), not from this
        # process: a forked copy of a process that has run torch can hang. The server
        # imports this module (spaCy with it) once, so each worker starts with it loaded.
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(["__main__", __name__])
        _pool = ProcessPoolExecutor(
            max_workers=workers,
            mp_context=context,
            initializer=_start_worker,
            initargs=(model,),
        )
        _pool_shape = (workers, model)
    return _pool


def submit(pairs: list[Pair], *, workers: int, model: str, sanity: bool = True) -> Future:
    """Send one chunk of pairs to a worker; the future holds its `PairAnnotation`s
    (`sanity`: as `annotate_pair`'s)."""
    return submit_call(_annotate_chunk, pairs, sanity, workers=workers, model=model)


def submit_call(function: Callable, *args, workers: int, model: str) -> Future:
    """`function(*args)` in a worker of the pool of `workers` processes for `model`."""
    with _pool_lock:
        try:
            return _executor(workers, model).submit(function, *args)
        except BrokenProcessPool:
            # A worker died in an earlier run: start again with a fresh pool.
            _stop_pool(cancel=True)
            return _executor(workers, model).submit(function, *args)


def map_chunks(
    function: Callable, items: Sequence, *args, chunk: int, workers: int, model: str
) -> list:
    """`function(items[i:i + chunk], *args)` for every chunk in the pool's workers, their
    results (lists) joined in the order of `items`."""
    futures = [
        submit_call(function, items[start : start + chunk], *args, workers=workers, model=model)
        for start in range(0, len(items), chunk)
    ]
    return [result for future in futures for result in future.result()]


def warm(*, workers: int, model: str) -> list[Future]:
    """Start the pool's `workers` processes now (each loads spaCy as it starts) without
    waiting for them; the futures are done when they are. A run that knows it will send
    work calls this before decoding, so the start overlaps decoding instead of following
    it (with continuous batching most candidates come at the end)."""
    # One task per worker: the executor starts a process for each task no idle one takes.
    return [submit_call(_ready, workers=workers, model=model) for _ in range(workers)]


def shutdown(*, wait: bool = True) -> None:
    """Stop the workers and drop the chunks not yet started; the next chunk starts a new pool."""
    with _pool_lock:
        _stop_pool(cancel=True, wait=wait)


def _stop_pool(*, cancel: bool, wait: bool = True) -> None:
    global _pool, _pool_shape
    pool, _pool, _pool_shape = _pool, None, None
    if pool is not None:
        pool.shutdown(wait=wait, cancel_futures=cancel)
