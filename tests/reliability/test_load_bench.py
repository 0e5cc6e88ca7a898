"""`bench/load.py --quick` runs end to end at a tiny size, paced, and finds nothing lost or
doubled."""

import re

from tests.reliability.conftest import needs_postgresql, run_bench

pytestmark = needs_postgresql


def test_the_load_benchmark_runs_and_checks_the_database():
    finished = run_bench(
        "load.py",
        *("--quick", "--workers", "8", "--rounds", "2", "--processes", "1", "--threads", "4"),
        *("--think", "0.02"),
        database_suffix="_load",
    )
    last = finished.stdout.strip().splitlines()[-1]
    assert re.match(
        r"RESULT load p99_ms=[\d.]+ judgments_per_s=[\d.]+ lost=0 duplicates=0 off_k=0 ", last
    ), last
    assert "8 concurrent workers, think time 0.02 s per decision" in finished.stdout
