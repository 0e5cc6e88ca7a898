"""bench/generation.py runs every engine, the ceiling, the baseline and a real
`transformers serve` on the same originals, and prints its RESULT line."""

import re
from pathlib import Path

import pytest

from tests.generation.tiny_models import tiny_lm_directory
from tests.support import run_bench

REPO = Path(__file__).resolve().parents[2]
CAD = REPO.parent / "shared" / "data" / "cad"


@pytest.mark.slow
@pytest.mark.skipif(not CAD.exists(), reason="needs ../shared/data/cad beside the checkout")
def test_the_script_runs_every_engine_and_reports_the_ceiling_and_the_server(tmp_path_factory):
    model = str(tiny_lm_directory(tmp_path_factory, "llama"))
    finished = run_bench(
        "generation.py",
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


@pytest.mark.slow
@pytest.mark.skipif(not CAD.exists(), reason="needs ../shared/data/cad beside the checkout")
def test_labeled_originals_are_prompted_label_directed_and_the_ceiling_decodes_the_same(
    tmp_path_factory,
):
    """What a campaign of labeled data runs: ours, the ceiling and the baseline all decode
    the label-directed prompts (a rewrite from the blank on: one prompt per blank set)."""
    model = str(tiny_lm_directory(tmp_path_factory, "llama"))
    common = ["--model", model, "--fluency-model", model, "--device", "cpu", "--originals", "2",
              "--baseline-originals", "1", "--codes", "negation,lexical", "--blank-sets", "1",
              "--no-quality", "--engines", "loop", "--strategy", "fewshot"]  # fmt: skip
    runs = {
        kind: run_bench("generation.py", *common, *flags)
        for kind, flags in (("labeled", ["--labeled"]), ("unlabeled", []))
    }
    prompts = {}
    for kind, finished in runs.items():
        assert finished.returncode == 0, finished.stdout[-3000:] + finished.stderr[-3000:]
        ours = re.search(r"^ours/loop\s+2 originals, (\d+) prompts", finished.stdout, re.M)
        ceiling = re.search(
            r"^ceiling: +plain generate\(\) of (\d+) prompts", finished.stdout, re.M
        )
        assert ours and ceiling and ours[1] == ceiling[1], finished.stdout
        prompts[kind] = int(ours[1])
        said = re.search(r"^prompts: +(\d+) per run, (\d+) of them label", finished.stdout, re.M)
        assert said and int(said[1]) == prompts[kind], finished.stdout
        figures = dict(pair.split("=", 1) for pair in finished.stdout.splitlines()[-1].split()[2:])
        assert figures["prompts"] == ("label-directed" if kind == "labeled" else "polyjuice")
        directed = int(said[2])
        assert int(figures["label_directed_prompts"]) == directed
        assert directed == (int(said[1]) if kind == "labeled" else 0), finished.stdout
        assert float(figures["baseline_cands_per_s"]) >= 0
    # 2 originals x 2 codes x (the whole sentence + 1 blank set), in both; what differs is
    # the prompts' kind.
    assert prompts == {"labeled": 8, "unlabeled": 8}
    assert "; labeled originals, label-directed prompts" in runs["labeled"].stdout
    assert "; unlabeled originals, polyjuice prompts" in runs["unlabeled"].stdout


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
    finished = run_bench("generation.py", "--data", str(tmp_path), *arguments, timeout=120)
    assert finished.returncode != 0
    assert message in finished.stderr
