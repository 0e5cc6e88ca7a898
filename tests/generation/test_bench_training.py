"""bench/training.py: the step benchmark runs at a tiny size (tiny model, CAD-shaped pairs)
and prints its RESULT line; bad options are one usage line."""

import re
import subprocess
from pathlib import Path

import pytest

from tests.generation.test_training_cli import data_folder
from tests.generation.tiny_models import tiny_lm_directory
from tests.support import run_bench

REPO = Path(__file__).resolve().parents[2]


def _run(*options: str) -> subprocess.CompletedProcess:
    return run_bench("training.py", *options, timeout=600)


def test_the_benchmark_times_every_side_and_prints_its_result(tmp_path_factory, tmp_path):
    data_folder(tmp_path / "data")
    model = tiny_lm_directory(tmp_path_factory, "gpt2")

    done = _run(
        "--data", str(tmp_path / "data"), "--model", str(model), "--device", "cpu",
        "--pairs", "12", "--steps", "2", "--batch-size", "4",
    )  # fmt: skip

    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert lines[0].startswith("12 pairs, ") and "2 timed steps a side, on cpu" in lines[0]
    sides = [line for line in lines if " s a step, " in line]
    assert any("fp32 random batches" in line for line in sides)
    assert any("grouped by length" in line for line in sides)
    result = re.fullmatch(
        r"RESULT training ratio=(\S+) seconds_per_step=(\S+) baseline_seconds_per_step=(\S+) "
        r"precision=(bf16|fp32) useful_share=(\S+) baseline_useful_share=(\S+) device=cpu",
        lines[-1],
    )
    assert result, lines[-1]
    ratio, ours, baseline = (float(result.group(index)) for index in (1, 2, 3))
    assert ours > 0 and baseline > 0
    assert ratio == pytest.approx(baseline / ours, rel=0.05)  # the seconds are rounded
    assert 0 < float(result.group(6)) <= float(result.group(5)) <= 1


def test_bad_options_are_one_usage_line(tmp_path):
    steps = _run("--steps", "0")
    assert steps.returncode == 2
    assert "--pairs, --steps and --batch-size must be at least 1" in steps.stderr
    missing = _run("--data", str(tmp_path / "nowhere"))
    assert missing.returncode == 2
    assert f"no data folder {tmp_path / 'nowhere'}" in missing.stderr
    assert "Traceback" not in steps.stderr + missing.stderr
