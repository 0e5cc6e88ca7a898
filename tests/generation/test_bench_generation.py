"""bench/generation.py runs every engine, the ceiling, the baseline and a real
`transformers serve` on the same originals, and prints its RESULT line."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.generation.tiny_models import tiny_lm_directory

REPO = Path(__file__).resolve().parents[2]
CAD = REPO.parent / "shared" / "data" / "cad"


@pytest.mark.slow
@pytest.mark.skipif(not CAD.exists(), reason="needs ../shared/data/cad beside the checkout")
def test_the_script_runs_every_engine_and_reports_the_ceiling_and_the_server(tmp_path_factory):
    model = str(tiny_lm_directory(tmp_path_factory, "llama"))
    finished = subprocess.run(
        [
            sys.executable,
            str(REPO / "bench" / "generation.py"),
            "--model",
            model,
            "--fluency-model",
            model,
            "--device",
            "cpu",
            "--originals",
            "2",
            "--baseline-originals",
            "1",
            "--codes",
            "negation",
            "--blank-sets",
            "1",
            "--start-server",
            "--server-api",
            "completions",
            "--no-quality",
            "--engines",
            "loop,continuous,continuous:sdpa",
            "--continuous-batching",
            "max_batch_tokens=512",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert finished.returncode == 0, finished.stdout[-3000:] + finished.stderr[-3000:]
    for engine in ("loop", "continuous", "continuous:sdpa", "server"):
        assert re.search(rf"^ours/{engine}\s+2 originals, \d+ prompts", finished.stdout, re.M)
    assert re.search(r"^ours/continuous .*\[attention varlen\]$", finished.stdout, re.M)
    assert re.search(r"^ours/continuous:sdpa .*\[attention sdpa\]$", finished.stdout, re.M)
    result = finished.stdout.strip().splitlines()[-1]
    assert result.startswith("RESULT generation ratio=")
    figures = dict(pair.split("=", 1) for pair in result.split()[2:])
    assert figures["engine"] == "loop"  # what `auto` picks on CPU
    for key in (
        "cands_per_s",
        "kept_per_s",
        "ceiling_ratio",
        "server_kept_per_s",
        "continuous_sdpa_kept_per_s",
    ):
        assert float(figures[key]) >= 0, key
    assert float(figures["ceiling_seqs_per_s"]) > 0
    assert float(figures["seqs_per_s"]) > 0
    # Decoding alone is part of the whole run: its ratio to the ceiling is the larger.
    assert float(figures["decode_ceiling_ratio"]) >= float(figures["ceiling_ratio"]) > 0
    assert re.search(r"^ceiling: .* end to end, [\d.]+ decoding alone\)$", finished.stdout, re.M)


@pytest.mark.parametrize(
    "arguments, message",
    [
        (["--continuous-batching", "max_batch_tokens"], "wants key=value (got 'max_batch_tokens')"),
        (["--engines", "loop:sdpa"], "only continuous takes an attention (got 'loop:sdpa')"),
        (["--engines", "continuous:flash"], "unknown attention 'flash' (auto, varlen, sdpa)"),
        (["--engines", "vllm"], "unknown in-process engine 'vllm' (loop, continuous)"),
    ],
)
def test_bad_engine_settings_are_refused_by_name(arguments, message, tmp_path):
    finished = subprocess.run(
        [
            sys.executable,
            str(REPO / "bench" / "generation.py"),
            "--data",
            str(tmp_path),
            *arguments,
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert finished.returncode != 0
    assert message in finished.stderr
