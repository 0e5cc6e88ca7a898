"""`bench/load.py --quick` runs end to end at a tiny size, paced, and finds nothing lost or
doubled."""

import re
import subprocess
import sys

from tests.reliability.conftest import database_url, needs_postgresql, server_env
from tests.support import REPO_ROOT

pytestmark = needs_postgresql


def test_the_load_benchmark_runs_and_checks_the_database():
    scratch = database_url() + "_load"  # its own database, created and dropped by the bench
    finished = subprocess.run(
        [
            sys.executable,
            str(REPO_ROOT / "bench" / "load.py"),
            "--quick",
            "--workers",
            "8",
            "--rounds",
            "2",
            "--processes",
            "1",
            "--threads",
            "4",
            "--think",
            "0.02",
            "--database-url",
            scratch,
        ],
        cwd=REPO_ROOT,
        env=server_env(),
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert finished.returncode == 0, finished.stdout[-2000:] + finished.stderr[-2000:]
    last = finished.stdout.strip().splitlines()[-1]
    assert re.match(
        r"RESULT load p99_ms=[\d.]+ judgments_per_s=[\d.]+ lost=0 duplicates=0 off_k=0 ", last
    ), last
    assert "8 concurrent workers, think time 0.02 s per decision" in finished.stdout
