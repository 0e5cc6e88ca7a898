"""generation.annotation_pool and the Annotator: the same annotations as before, in
process or from the pool, whatever order candidates arrive in; a worker's error
surfaces in `finish` and leaves the next run a working pool."""

import hashlib
import json
import os
import random
from concurrent.futures import Future
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

import pytest

from generation import annotation_pool
from generation.annotation_pool import Pair, annotate_pair, annotation_nlp, default_workers
from generation.parsing import ParseCache, load_nlp
from generation.postprocess import Annotator, annotate
from generation.records import CandidateRecord, OriginalRecord

# Pairs of fixture sentences and word edits of them, with the code, relationship and a
# digest of the edit that the annotation code before the Annotator gave them.
FROZEN = [
    json.loads(line)
    for line in (Path(__file__).parent / "fixtures" / "annotations.jsonl").open()
    if line.strip()
]
ORIGINALS = {
    row["relationship"]["base"]: OriginalRecord(row["relationship"]["base"], row["original"], "")
    for row in FROZEN
}
RECORDS = [CandidateRecord(row["relationship"]["base"], row["candidate"], "test") for row in FROZEN]


def _digest(edit: dict) -> str:
    text = json.dumps(edit, sort_keys=True).encode()
    return hashlib.sha1(text, usedforsecurity=False).hexdigest()


def _frozen_view(candidates) -> list[dict]:
    return [
        {
            "original": ORIGINALS[c.record.original_key].text,
            "candidate": c.record.text,
            "code": c.code,
            "relationship": c.relationship.to_dict(),
            "edit_sha1": _digest(c.edit),
        }
        for c in candidates
    ]


def _comparable(result) -> tuple:
    return (
        [
            (c.record, c.code, c.edit, c.relationship, c.fluency, c.dropped_by)
            for c in result.candidates
        ],
        result.stats,
    )


@pytest.fixture(scope="module")
def parses() -> ParseCache:
    return ParseCache()


@pytest.fixture(scope="module")
def pool():
    """The pool, forced on for small inputs; stopped when the module is done."""
    yield 2
    annotation_pool.shutdown()


@pytest.fixture
def always_pooled(monkeypatch, pool):
    monkeypatch.setattr(Annotator, "POOL_MIN_PAIRS", 1)
    monkeypatch.setattr(Annotator, "CHUNK_PAIRS", 16)
    return pool


def test_annotate_pair_gives_the_frozen_annotations(parses):
    annotations = [
        annotate_pair(
            row["relationship"]["base"],
            parses.parse(row["original"]),
            parses.parse(row["candidate"]),
        )
        for row in FROZEN
    ]

    got = [
        {
            "original": row["original"],
            "candidate": row["candidate"],
            "code": annotation.code,
            "relationship": annotation.relationship.to_dict(),
            "edit_sha1": _digest(annotation.edit),
        }
        for row, annotation in zip(FROZEN, annotations, strict=True)
    ]
    assert got == FROZEN


def test_fluency_phrases_are_the_character_spans_of_the_edit_ops(parses):
    row = FROZEN[0]
    annotation = annotate_pair("x", parses.parse(row["original"]), parses.parse(row["candidate"]))

    assert annotation.phrases == tuple(
        (tuple(op["source_chars"]), tuple(op["target_chars"])) for op in annotation.edit["ops"]
    )


def test_the_pipeline_without_entities_parses_every_fixture_text_the_same():
    full, lean = load_nlp(), annotation_nlp()
    texts = sorted({text for row in FROZEN for text in (row["original"], row["candidate"])})
    assert "ner" not in lean.pipe_names

    def read(doc) -> list[tuple]:
        return [
            (t.text, t.tag_, t.pos_, t.dep_, t.head.i, t.lemma_, str(t.morph), t.is_sent_start)
            for t in doc
        ]

    assert [read(doc) for doc in lean.pipe(texts)] == [read(doc) for doc in full.pipe(texts)]


def test_in_process_annotate_gives_the_frozen_annotations(parses):
    result = annotate(RECORDS, ORIGINALS, parses=parses, workers=0)

    assert _frozen_view(result.candidates) == FROZEN


def test_the_pool_gives_what_the_process_gives(parses, always_pooled):
    here = annotate(RECORDS, ORIGINALS, parses=parses, workers=0)
    pooled = annotate(RECORDS, ORIGINALS, parses=parses, workers=always_pooled)

    assert annotation_pool._pool is not None, "the pool was used"
    assert _comparable(pooled) == _comparable(here)
    assert _frozen_view(pooled.candidates) == FROZEN


@pytest.mark.parametrize("workers", [0, 2])
def test_out_of_order_adds_give_what_one_call_gives(parses, always_pooled, workers):
    # A third of the records twice, once in upper case: dedupe keeps whichever comes
    # first in the final order, and the annotation is of that text. And copies of x.
    records = [
        *RECORDS,
        *(CandidateRecord(r.original_key, r.text.upper(), "test") for r in RECORDS[::3]),
        *(CandidateRecord(key, o.text.lower(), "test") for key, o in ORIGINALS.items()),
    ]
    random.Random(5).shuffle(records)
    expected = annotate(records, ORIGINALS, parses=parses, workers=0)

    arrival = list(records)
    random.Random(6).shuffle(arrival)
    annotator = Annotator(ORIGINALS, parses=parses, workers=workers)
    for start in range(0, len(arrival), 7):
        annotator.add(arrival[start : start + 7])
    result = annotator.finish(records)

    assert _comparable(result) == _comparable(expected)
    assert result.stats.duplicates > 0 and result.stats.copies > 0


def test_a_worker_error_surfaces_in_finish_and_the_next_run_works(parses, always_pooled):
    too_long = CandidateRecord("x0", "word " * 200_001, "test")  # past spaCy's max_length
    annotator = Annotator(ORIGINALS, parses=parses, workers=always_pooled)
    annotator.add([too_long, *RECORDS[:20]])

    with pytest.raises(ValueError, match=r"\[E088\] Text of length 1000005 exceeds maximum"):
        annotator.finish()

    again = annotate(RECORDS, ORIGINALS, parses=parses, workers=always_pooled)
    assert _frozen_view(again.candidates) == FROZEN


def test_a_dead_worker_fails_only_its_run(parses, always_pooled):
    broken = annotation_pool._executor(always_pooled, annotation_pool.SPACY_MODEL)
    with pytest.raises(BrokenProcessPool):
        broken.submit(os._exit, 1).result(timeout=60)

    result = annotate(RECORDS, ORIGINALS, parses=parses, workers=always_pooled)

    assert annotation_pool._pool is not broken
    assert _frozen_view(result.candidates) == FROZEN


def test_a_small_run_does_not_start_a_pool(parses, pool):
    annotation_pool.shutdown()

    result = annotate(RECORDS[:10], ORIGINALS, parses=parses, workers=pool)

    assert len(result.candidates) == len({(r.original_key, r.text) for r in RECORDS[:10]})
    assert annotation_pool._pool is None


def test_a_pipeline_passed_in_stays_in_this_process():
    parses = ParseCache(load_nlp())

    annotator = Annotator(ORIGINALS, parses=parses, workers=4)

    assert annotator.workers == 0
    assert _frozen_view(annotate(RECORDS[:12], ORIGINALS, parses=parses).candidates) == FROZEN[:12]


def test_default_workers_come_from_the_environment(monkeypatch):
    monkeypatch.setenv(annotation_pool.WORKERS_VARIABLE, "3")
    assert default_workers() == 3
    monkeypatch.setenv(annotation_pool.WORKERS_VARIABLE, "0")
    assert default_workers() == 0
    monkeypatch.delenv(annotation_pool.WORKERS_VARIABLE)
    # Up to 4, or half the cores of a bigger machine (a GPU machine's 16: 8).
    for cores, workers in [(None, 1), (1, 1), (2, 2), (8, 4), (12, 6), (16, 8), (64, 32)]:
        monkeypatch.setattr(annotation_pool.os, "cpu_count", lambda cores=cores: cores)
        assert default_workers() == workers, cores
    monkeypatch.undo()
    monkeypatch.setenv(annotation_pool.WORKERS_VARIABLE, "many")
    with pytest.raises(ValueError, match="CFANNOTATE_ANNOTATION_WORKERS must be a whole number"):
        default_workers()


def test_warm_starts_every_worker_before_any_work(pool):
    annotation_pool.shutdown()

    ready = annotation_pool.warm(workers=pool, model=annotation_pool.SPACY_MODEL)

    assert [future.result(timeout=120) for future in ready] == [True] * pool
    assert len(annotation_pool._pool._processes) == pool


@pytest.mark.parametrize(
    ("workers", "sequences", "started"),
    [
        (2, Annotator.POOL_MIN_PAIRS, True),
        (2, Annotator.POOL_MIN_PAIRS - 1, False),
        (0, 999, False),
    ],
)
def test_expect_starts_the_pool_only_for_a_run_that_will_use_it(
    parses, monkeypatch, workers, sequences, started
):
    calls = []
    monkeypatch.setattr(annotation_pool, "warm", lambda **kwargs: calls.append(kwargs))

    Annotator(ORIGINALS, parses=parses, workers=workers).expect(sequences)

    assert calls == ([{"workers": workers, "model": parses.model}] if started else [])


def test_expect_leaves_a_pipeline_passed_in_alone(monkeypatch):
    calls = []
    monkeypatch.setattr(annotation_pool, "warm", lambda **kwargs: calls.append(kwargs))

    Annotator(ORIGINALS, parses=ParseCache(load_nlp()), workers=2).expect(10_000)

    assert calls == []


# A candidate the pair sanity filters drop ("truncated"), of an original of its own.
ACTING = OriginalRecord(
    "acting", "The acting was superb and the story kept me hooked until the very end.", ""
)
TRUNCATED = CandidateRecord("acting", "The acting was superb and the story kept me", "test")


def _filters_must_not_run(*args, **kwargs):
    raise AssertionError("the pair sanity filters ran in a run without them")


@pytest.fixture
def pool_in_this_process(monkeypatch, always_pooled):
    """Every chunk the Annotator sends to the pool runs here, in a worker's functions,
    so that what they call can be replaced."""

    def run_here(function, *args, workers, model):
        future = Future()
        future.set_result(function(*args))
        return future

    monkeypatch.setattr(annotation_pool, "submit_call", run_here)
    monkeypatch.setattr(annotation_pool, "_worker_nlp", annotation_nlp())
    monkeypatch.setattr(annotation_pool, "_worker_originals", {})
    return always_pooled


@pytest.mark.parametrize("pooled", [False, True])
def test_a_run_without_sanity_never_runs_the_pair_filters(
    parses, monkeypatch, pool_in_this_process, pooled
):
    records = [*RECORDS, TRUNCATED]
    originals = {**ORIGINALS, ACTING.key: ACTING}
    workers = pool_in_this_process if pooled else 0
    on = annotate(records, originals, parses=parses, workers=workers)

    monkeypatch.setattr(annotation_pool, "pair_sanity_reason", _filters_must_not_run)
    off = annotate(records, originals, parses=parses, workers=workers, sanity=False)

    assert on.candidates[-1].dropped_by == "truncated"
    assert all(c.kept for c in off.candidates)
    assert [(c.record, c.code, c.edit, c.relationship) for c in off.candidates] == [
        (c.record, c.code, c.edit, c.relationship) for c in on.candidates
    ]
    assert _frozen_view(off.candidates[:-1]) == FROZEN


def test_the_pool_runs_the_pair_filters_only_when_asked(pool):
    pair = Pair(ACTING.key, ACTING.text, TRUNCATED.text)
    model = annotation_pool.SPACY_MODEL

    (on,) = annotation_pool.submit([pair], workers=pool, model=model).result(timeout=120)
    (off,) = annotation_pool.submit([pair], workers=pool, model=model, sanity=False).result(
        timeout=120
    )

    assert (on.sanity, off.sanity) == ("truncated", None)
    assert (off.edit, off.code, off.relationship) == (on.edit, on.code, on.relationship)
