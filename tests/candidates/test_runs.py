"""Generation runs: chunks claimed once, idempotent writes, leases, cancel and retry."""

from datetime import timedelta

import pytest
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from cfannotate.candidates.models import Candidate, ChunkState, GenerationChunk, RunState
from cfannotate.candidates.runs import (
    _claim,
    _finish,
    generation_chunk_process,
    generation_run_cancel,
    generation_run_create,
    generation_run_retry,
    generation_run_start,
    requeue_stale_chunks,
)
from cfannotate.candidates.selectors import run_progress
from cfannotate.core.exceptions import Conflict, InvalidInput
from tests.factories import make_campaign, make_original

CODES = {
    "generators": [{"name": "polyjuice", "codes": ["negation"], "blank_sets": 1, "per_prompt": 1}]
}


@pytest.fixture
def campaign(researcher):
    campaign = make_campaign(owner=researcher, settings=CODES)
    for index in range(5):
        make_original(campaign, text=f"Movie number {index} is great for kids.")
    return campaign


def process(chunk, tiny_lm):
    return generation_chunk_process(
        chunk_id=chunk.pk, lm=tiny_lm, fluency_lm=tiny_lm, worker="test"
    )


def test_a_run_splits_originals_into_chunks(campaign):
    run = generation_run_create(campaign=campaign, chunk_size=2)
    chunks = list(run.chunks.order_by("index"))
    assert run.chunks_total == len(chunks) == 3
    assert [len(chunk.original_ids) for chunk in chunks] == [2, 2, 1]
    ids = [pk for chunk in chunks for pk in chunk.original_ids]
    assert sorted(ids) == sorted(campaign.originals.values_list("id", flat=True))


def test_one_run_at_a_time_and_bad_input(campaign, researcher):
    generation_run_create(campaign=campaign)
    with pytest.raises(Conflict, match="already has a generation run"):
        generation_run_create(campaign=campaign)
    with pytest.raises(InvalidInput, match="chunk_size"):
        generation_run_create(campaign=make_campaign(owner=researcher), chunk_size=0)
    with pytest.raises(InvalidInput, match="no originals"):
        generation_run_create(campaign=make_campaign(owner=researcher))


def test_starting_a_run_queues_one_task_per_chunk_on_commit(
    campaign, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        run = generation_run_start(campaign=campaign, chunk_size=2)
    tasks = DBTaskResult.objects.filter(queue_name="generation")
    assert tasks.count() == run.chunks_total == 3
    assert sorted(task.args_kwargs["args"][0] for task in tasks) == sorted(
        run.chunks.values_list("id", flat=True)
    )


def test_chunks_are_processed_once_and_counted_once(campaign, tiny_lm, scripted):
    run = generation_run_create(campaign=campaign, chunk_size=2)
    chunks = list(run.chunks.order_by("index"))
    assert [process(chunk, tiny_lm) for chunk in chunks] == ["done"] * 3
    assert process(chunks[0], tiny_lm) == "skipped"  # a replayed task does nothing
    run.refresh_from_db()
    assert run.state == RunState.DONE and run.chunks_done == 3
    stored = Candidate.objects.filter(campaign=campaign).count()
    assert stored == run.candidates_stored > 0
    progress = run_progress(run)
    assert progress.percent == 100 and progress.eta_seconds is None


def test_an_expired_lease_lets_another_worker_take_over(campaign, tiny_lm, scripted):
    run = generation_run_create(campaign=campaign, chunk_size=5)
    chunk = run.chunks.get()
    stuck = _claim(chunk.pk, "worker-that-dies")
    assert stuck is not None and _claim(chunk.pk, "another") is None  # lease still held
    GenerationChunk.objects.filter(pk=chunk.pk).update(
        lease_expires_at=timezone.now() - timedelta(seconds=1)
    )
    assert process(chunk, tiny_lm) == "done"
    chunk.refresh_from_db()
    assert (chunk.state, chunk.attempts, chunk.worker) == (ChunkState.DONE, 2, "test")
    # The dead worker's late report is ignored: the chunk is counted once.
    assert _finish(stuck, state=ChunkState.DONE, stored=99) is False
    run.refresh_from_db()
    assert run.chunks_done == 1 and run.candidates_stored < 99


def test_stale_chunks_are_queued_again(campaign):
    run = generation_run_create(campaign=campaign, chunk_size=5)
    chunk = run.chunks.get()
    _claim(chunk.pk, "worker-that-dies")
    assert requeue_stale_chunks() == 0
    GenerationChunk.objects.filter(pk=chunk.pk).update(
        lease_expires_at=timezone.now() - timedelta(seconds=1)
    )
    assert requeue_stale_chunks() == 1
    assert DBTaskResult.objects.filter(queue_name="generation").count() == 1


def test_cancel_drops_queued_chunks(campaign, tiny_lm, scripted):
    run = generation_run_create(campaign=campaign, chunk_size=2)
    first, second, _ = run.chunks.order_by("index")
    process(first, tiny_lm)
    generation_run_cancel(run=run)
    assert process(second, tiny_lm) == "skipped"
    states = list(run.chunks.order_by("index").values_list("state", flat=True))
    assert states == [ChunkState.DONE, ChunkState.CANCELLED, ChunkState.CANCELLED]
    with pytest.raises(Conflict, match="already cancelled"):
        generation_run_cancel(run=run)


def test_failed_chunks_are_recorded_and_retried(
    campaign, tiny_lm, scripted, monkeypatch, django_capture_on_commit_callbacks
):
    run = generation_run_create(campaign=campaign, chunk_size=5)
    chunk = run.chunks.get()

    def boom(**kwargs):
        raise RuntimeError("CUDA error: device lost")

    monkeypatch.setattr("cfannotate.candidates.services.candidates_generate", boom)
    with pytest.raises(RuntimeError):
        process(chunk, tiny_lm)
    run.refresh_from_db()
    chunk.refresh_from_db()
    assert run.state == RunState.FAILED and run.chunks_failed == 1
    assert chunk.state == ChunkState.FAILED and "device lost" in chunk.error

    monkeypatch.undo()
    monkeypatch.setattr(
        "generation.polyjuice.generate_continuations",
        lambda lm, prompts, budgets, config, **kw: [["not [ANSWER]"]] * len(prompts),
    )
    with django_capture_on_commit_callbacks(execute=True):
        assert generation_run_retry(run=run) == 1
    assert process(chunk, tiny_lm) == "done"
    run.refresh_from_db()
    assert (run.state, run.chunks_failed, run.chunks_done) == (RunState.DONE, 0, 1)
    with pytest.raises(Conflict, match="no failed chunks"):
        generation_run_retry(run=run)


def test_generate_command_runs_the_chunks_in_the_foreground(
    campaign, monkeypatch, tiny_lm, scripted
):
    from io import StringIO

    from django.core.management import call_command

    monkeypatch.setattr("generation.pipeline.load_cached", lambda *a, **k: tiny_lm)
    out = StringIO()
    call_command("generate", campaign.id, "--limit", "3", "--chunk-size", "2", stdout=out)
    assert "done" in out.getvalue() and "from 3 originals in 2 chunk(s)" in out.getvalue()
    assert Candidate.objects.filter(campaign=campaign).exists()


def test_a_chunk_of_two_generators_taken_over_stores_each_candidate_once(
    two_generator_campaign, tiny_lm
):
    from cfannotate.candidates.services import candidates_generate

    campaign = two_generator_campaign
    run = generation_run_create(campaign=campaign, chunk_size=10)
    chunk = run.chunks.get()
    assert _claim(chunk.pk, "worker-that-dies") is not None
    # The first worker stored its candidates, then died before reporting the chunk done.
    candidates_generate(campaign=campaign, lm=tiny_lm, fluency_lm=tiny_lm)
    GenerationChunk.objects.filter(pk=chunk.pk).update(
        lease_expires_at=timezone.now() - timedelta(seconds=1)
    )
    assert process(chunk, tiny_lm) == "done"
    rows = list(Candidate.objects.filter(campaign=campaign).values_list("generator", "text"))
    assert sorted(rows) == [
        ("causal-negation", "It is not great for kids."),
        ("lexicon-remove", "The film is a bad movie."),
        ("lexicon-remove", "This film never finds its rhythm."),
    ]
    run.refresh_from_db()
    assert run.state == RunState.DONE and run.chunks_done == 1
