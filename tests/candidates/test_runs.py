"""Generation runs: chunks claimed once, idempotent writes, leases, cancel and retry."""

from datetime import timedelta

import pytest
from django.core.management import CommandError
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from cfannotate.candidates.models import (
    Candidate,
    ChunkState,
    GenerationChunk,
    GenerationRun,
    RunState,
)
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


def test_an_interrupted_chunk_is_taken_again_at_once_or_dropped_with_its_run(campaign, monkeypatch):
    """Ctrl-C (a worker shut down, a foreground `generate`) left the chunk running for the
    lease's 30 minutes: nobody took it, and a cancelled run showed it running."""

    def interrupted(**kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr("cfannotate.candidates.services.candidates_generate", interrupted)
    run = generation_run_create(campaign=campaign, chunk_size=3)
    first, second = run.chunks.order_by("index")
    with pytest.raises(KeyboardInterrupt):
        generation_chunk_process(chunk_id=first.pk, worker="stopped")
    first.refresh_from_db()
    assert first.state == ChunkState.RUNNING and first.lease_expires_at <= timezone.now()
    assert requeue_stale_chunks(run=run) == 1  # a worker takes it now, not in 30 minutes

    with pytest.raises(KeyboardInterrupt):
        generation_chunk_process(chunk_id=second.pk, worker="held")
    GenerationChunk.objects.filter(pk=first.pk).update(
        lease_expires_at=timezone.now() + timedelta(minutes=5)  # another worker holds it
    )
    generation_run_cancel(run=run)
    states = list(run.chunks.order_by("index").values_list("state", flat=True))
    assert states == [ChunkState.RUNNING, ChunkState.CANCELLED]


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
        "generation.engines.loop.generate_continuations",
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
    assert "done" in out.getvalue() and "from 3 originals in 2 chunks" in out.getvalue()
    assert Candidate.objects.filter(campaign=campaign).exists()

    # The rest: only the originals not generated yet, in a run of their own.
    rest = campaign.originals.order_by("id")[3:]
    out = StringIO()
    call_command("generate", campaign.id, "--not-generated", stdout=out)
    latest = GenerationRun.objects.filter(campaign=campaign).latest("created_at")
    ids = [pk for chunk in latest.chunks.all() for pk in chunk.original_ids]
    assert sorted(ids) == sorted(original.pk for original in rest)
    assert f"from {len(ids)} original" in out.getvalue()
    with pytest.raises(CommandError, match="has been generated already"):
        call_command("generate", campaign.id, "--not-generated")


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


# ------------------------------------------------------------------ through an inference server

SERVED = {
    "name": "polyjuice",
    "codes": ["negation"],
    "blank_sets": 1,
    "per_prompt": 1,
    "engine": "server",
    "server_url": "http://gpu-box:8000/v1",
    "server_model": "org/m-7b",
}
DOWN = (
    "The inference server at http://gpu-box:8000/v1 failed after 4 tries: HTTP 503: "
    "<b>model is loading</b>"
)


class FakeServerEngine:
    """The server engine's contract, answering like `scripted`; with `failure`, it reports
    one prompt and then fails as the real one does after its retries."""

    name = "server"

    def __init__(self, server, tokenizer, failure: str = "") -> None:
        self.server = server
        self.model_name = server.model
        self.tokenizer = tokenizer
        self.failure = failure

    def generate(self, prompts, max_new_tokens, config, *, on_result=None, **kwargs):
        from generation.engines.server import InferenceServerError

        outputs = [["not [ANSWER]"] * config.per_prompt for _ in prompts]
        if self.failure:
            if on_result:
                on_result(0, outputs[0])  # one prompt came back before the server failed
            raise InferenceServerError(self.failure, status=503)
        return outputs


@pytest.fixture
def served(monkeypatch, researcher, tiny_lm, inference_server, rule_generators):
    """A campaign whose Polyjuice entry generates through a (fake) inference server, beside
    a rule-based generator that needs none; `served.failure` makes the server fail."""
    engines = []

    def make_engine(name, *, lm=None, server=None):
        assert name == "server" and lm is None  # no local generator model is loaded
        engines.append(FakeServerEngine(server, tiny_lm.tokenizer, served.failure))
        return engines[-1]

    monkeypatch.setattr("generation.polyjuice.make_engine", make_engine)
    campaign = make_campaign(
        owner=researcher, settings={"generators": [rule_generators[0], SERVED]}
    )
    for text in ("It is great for kids.", "The film is a good movie."):
        make_original(campaign, text=text, label="positive")
    served.campaign, served.engines, served.failure = campaign, engines, ""
    return served


def test_candidates_made_through_a_server_record_its_engine_and_model(served, tiny_lm):
    run = generation_run_create(campaign=served.campaign)
    assert process(run.chunks.get(), tiny_lm) == "done"
    assert served.engines[0].server.base_url == "http://gpu-box:8000/v1"
    made = Candidate.objects.filter(campaign=served.campaign, generator="polyjuice")
    assert made.exists()
    assert {(c.metadata["engine"], c.metadata["model"]) for c in made} == {("server", "org/m-7b")}
    # The rule generator beside it stores its own (what a failing chunk must not keep).
    assert Candidate.objects.filter(campaign=served.campaign, generator="causal-negation").exists()


def test_a_failing_server_fails_the_chunk_with_its_message_and_stores_nothing(
    served, tiny_lm, client, researcher, api_client
):
    served.failure = DOWN
    run = generation_run_create(campaign=served.campaign)
    chunk = run.chunks.get()
    with pytest.raises(RuntimeError, match="model is loading"):
        process(chunk, tiny_lm)
    chunk.refresh_from_db()
    run.refresh_from_db()
    assert chunk.state == ChunkState.FAILED and chunk.error == f"InferenceServerError: {DOWN}"
    assert run.state == RunState.FAILED
    # Nothing half-written: neither the prompt the server answered nor the rule generator's.
    assert not Candidate.objects.filter(campaign=served.campaign).exists()

    client.force_login(researcher)
    html = client.get(f"/campaigns/{served.campaign.id}/generate/").content.decode()
    assert "Chunk 1 failed: InferenceServerError: The inference server at" in html
    assert "HTTP 503: &lt;b&gt;model is loading&lt;/b&gt;" in html  # escaped
    assert "Retry failed chunks" in html
    progress = api_client.get(f"/api/campaigns/{served.campaign.id}/generation/").json()
    assert progress["failures"] == [{"chunk": 0, "error": f"InferenceServerError: {DOWN}"}]

    served.failure = ""  # the server is back: the retried chunk stores its candidates
    generation_run_retry(run=run)
    assert process(chunk, tiny_lm) == "done"
    assert Candidate.objects.filter(campaign=served.campaign, generator="polyjuice").exists()
    html = client.get(f"/campaigns/{served.campaign.id}/generate/").content.decode()
    assert "failed:" not in html
