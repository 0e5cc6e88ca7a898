"""A real gunicorn serving the test database, for the tests that break things under load.

PostgreSQL only: the server is a separate process that must see the test's data, and
what is checked (row locks, dropped connections, a killed server's open transactions)
is PostgreSQL's behaviour. The server runs with DEBUG off, as in production.
"""

import os
import signal
import socket
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection
from django.urls import reverse

from bench.load import start_server
from bench.worker_client import SimulatedWorker
from cfannotate.core.worker_tokens import join_token
from tests.support import REPO_ROOT

needs_postgresql = pytest.mark.skipif(
    not os.environ.get("DATABASE_URL", "").startswith("postgres"),
    reason="needs PostgreSQL (set DATABASE_URL): a separate server process shares the database",
)


def database_url() -> str:
    settings = connection.settings_dict
    return (
        f"postgres://{settings['USER'] or 'postgres'}@{settings['HOST'] or '127.0.0.1'}:"
        f"{settings['PORT'] or 5432}/{settings['NAME']}"
    )


def server_env() -> dict[str, str]:
    # CFANNOTATE_STATE_DIR stays: the server signs tokens with the same secret key.
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTEST")}
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    env.update(
        {
            "DATABASE_URL": database_url(),
            "CFANNOTATE_DEBUG": "0",
            "CFANNOTATE_LOG_LEVEL": "CRITICAL",
            "OMP_NUM_THREADS": "1",
        }
    )
    return env


class Gunicorn:
    """Start, stop and kill gunicorn on one port, as an operator (or a crash) would."""

    def __init__(self, processes: int = 1, threads: int = 4) -> None:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.processes, self.threads = processes, threads
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        self.process = start_server(server_env(), self.port, self.processes, self.threads)

    def terminate(self) -> None:
        """SIGTERM to the master: a graceful stop; workers finish what they are doing."""
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=60)

    def kill(self) -> None:
        """SIGKILL to the master and its workers at once: a crash mid-request."""
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.kill()


def run_bench(script: str, *args: str, database_suffix: str) -> subprocess.CompletedProcess:
    """`bench/<script>` in a fresh process on its own scratch database (which it creates
    and drops), as a person runs it; it must exit 0."""
    finished = subprocess.run(
        [
            sys.executable,
            str(REPO_ROOT / "bench" / script),
            *args,
            "--database-url",
            database_url() + database_suffix,
        ],
        cwd=REPO_ROOT,
        env=server_env(),
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert finished.returncode == 0, finished.stdout[-3000:] + finished.stderr[-3000:]
    return finished


@pytest.fixture
def gunicorn():
    server = Gunicorn()
    yield server
    server.stop()


def join_path(campaign) -> str:
    return reverse("join", kwargs={"token": join_token(campaign.id)})


def start_workers(pool: ThreadPoolExecutor, base_url: str, path: str, names, **options):
    """Simulated workers that save every click and retry what fails in transit."""
    options.setdefault("retry_seconds", 120)
    return [
        pool.submit(SimulatedWorker(base_url, path, name, seed=number, htmx=True, **options).run)
        for number, name in enumerate(names)
    ]
