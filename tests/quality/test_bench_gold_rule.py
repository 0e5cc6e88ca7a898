"""bench/gold_rule.py: the hold keeps more careful workers than the rule without it, and the
script runs at a tiny size and prints its RESULT line."""

import re
import subprocess
import sys
from pathlib import Path

from bench.gold_rule import assignments_until_removed, crowd

REPO = Path(__file__).resolve().parents[2]


def test_a_worker_always_right_is_never_removed_and_one_always_wrong_at_once():
    for hold in (True, False):
        kwargs = {"gold_per_assignment": 4, "assignments": 5, "hold": hold, "seed": 0}
        assert assignments_until_removed(1.0, **kwargs) is None
        assert assignments_until_removed(0.0, **kwargs) == 1


def test_with_four_gold_an_assignment_the_hold_keeps_more_careful_workers():
    ours, _ = crowd(0.85, workers=600, gold=4, assignments=5, hold=True)
    baseline, _ = crowd(0.85, workers=600, gold=4, assignments=5, hold=False)
    assert ours < baseline / 1.5
    # Six gold an assignment answer the sample at once: the two rules agree.
    assert crowd(0.85, workers=300, gold=6, assignments=3, hold=True) == crowd(
        0.85, workers=300, gold=6, assignments=3, hold=False
    )


def test_the_script_prints_its_result_line():
    completed = subprocess.run(
        [sys.executable, "bench/gold_rule.py", "--workers", "50", "--assignments", "3"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    last = completed.stdout.strip().splitlines()[-1]
    assert re.fullmatch(
        r"RESULT gold_rule careful_removed=[\d.]+ baseline_careful_removed=[\d.]+ "
        r"ratio=([\d.]+|inf) spammer_assignments=[\d.]+ baseline_spammer_assignments=[\d.]+",
        last,
    )
