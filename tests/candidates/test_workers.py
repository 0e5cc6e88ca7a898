"""Real `db_worker` processes sharing one PostgreSQL database run a campaign's chunks.

Needs PostgreSQL (CI sets DATABASE_URL): the workers are separate processes and an
in-memory SQLite test database cannot be shared with them.
"""

import os
import signal
import subprocess
import sys
import time
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from cfannotate.candidates.models import Candidate, ChunkState, GenerationChunk, RunState
from cfannotate.candidates.runs import generation_run_start, requeue_stale_chunks
from tests.factories import make_campaign, make_original
from tests.generation.tiny_models import tiny_lm_directory
from tests.support import REPO_ROOT

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        not os.environ.get("DATABASE_URL", "").startswith("postgres"),
        reason="worker processes need a shared PostgreSQL database (set DATABASE_URL)",
    ),
]


def _worker_env() -> dict[str, str]:
    settings = connection.settings_dict
    url = (
        f"postgres://{settings['USER'] or 'postgres'}@{settings['HOST'] or '127.0.0.1'}:"
        f"{settings['PORT'] or 5432}/{settings['NAME']}"
    )
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTEST")}
    env.update({"DATABASE_URL": url, "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"})
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    return env


@pytest.fixture
def start_worker():
    """Starts `db_worker` processes and makes sure none outlives the test (it would hold
    a connection to the test database)."""
    started: list[subprocess.Popen] = []

    def start(*extra: str) -> subprocess.Popen:
        process = _worker(*extra)
        started.append(process)
        return process

    yield start
    for process in started:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=30)


def _worker(*extra: str) -> subprocess.Popen:
    return subprocess.Popen(
        [
            sys.executable,
            str(REPO_ROOT / "manage.py"),
            "db_worker",
            "--queue-name",
            "generation",
            "--no-startup-delay",
            "--no-reload",
            "--interval",
            "0.2",
            *extra,
        ],
        cwd=REPO_ROOT,
        env=_worker_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


@pytest.fixture
def campaign(researcher, tmp_path_factory):
    model = str(tiny_lm_directory(tmp_path_factory, "gpt2"))
    campaign = make_campaign(
        owner=researcher,
        settings={
            "generators": [
                {
                    "name": "polyjuice",
                    "codes": ["negation", "lexical"],
                    "blank_sets": 1,
                    "per_prompt": 2,
                    "model": model,
                    "fluency_model": model,
                    "batch_size": 8,
                }
            ]
        },
    )
    for index in range(6):
        make_original(campaign, text=f"The {index}th film was great for kids.")
    return campaign


def _assert_all_done_once(run, campaign):
    run.refresh_from_db()
    chunks = list(run.chunks.all())
    errors = {chunk.error for chunk in chunks if chunk.error}
    assert not errors, errors
    assert [chunk.state for chunk in chunks] == [ChunkState.DONE] * len(chunks)
    assert run.state == RunState.DONE and run.chunks_done == run.chunks_total == len(chunks)
    texts = list(Candidate.objects.filter(campaign=campaign).values_list("original_id", "text"))
    assert len(texts) == len(set(texts)) == run.candidates_stored


def test_two_workers_share_a_run(campaign, start_worker):
    run = generation_run_start(campaign=campaign, chunk_size=1)
    workers = [start_worker("--batch"), start_worker("--batch")]
    outputs = [worker.communicate(timeout=240)[0] for worker in workers]
    assert all(worker.returncode == 0 for worker in workers), outputs
    _assert_all_done_once(run, campaign)
    assert all(chunk.attempts == 1 for chunk in run.chunks.all())
    # Both workers took part.
    assert len({chunk.worker.split(":")[-1] for chunk in run.chunks.all()}) == 2


def test_a_worker_killed_mid_chunk_loses_only_that_chunk(campaign, start_worker):
    run = generation_run_start(campaign=campaign, chunk_size=1)
    doomed = start_worker()
    deadline = time.monotonic() + 120
    while not run.chunks.filter(state=ChunkState.RUNNING).exists():
        assert time.monotonic() < deadline, "the worker never started a chunk"
        assert doomed.poll() is None, doomed.communicate()[0]
        time.sleep(0.05)
    doomed.send_signal(signal.SIGKILL)
    doomed.wait(timeout=30)
    running = run.chunks.filter(state=ChunkState.RUNNING)
    assert running.count() == 1
    # Its lease runs out (we do not wait 30 minutes), and the sweep queues it again.
    GenerationChunk.objects.filter(pk__in=running.values("pk")).update(
        lease_expires_at=timezone.now() - timedelta(seconds=1)
    )
    assert requeue_stale_chunks() == 1
    survivor = start_worker("--batch")
    output = survivor.communicate(timeout=240)[0]
    assert survivor.returncode == 0, output
    _assert_all_done_once(run, campaign)
    attempts = {chunk.index: (chunk.attempts, chunk.worker) for chunk in run.chunks.all()}
    assert max(a for a, _ in attempts.values()) == 2, attempts
