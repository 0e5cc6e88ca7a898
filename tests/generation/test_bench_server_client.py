"""bench/server_client.py: its server answers as the engine expects (lists of prompts
numbered as the OpenAI API numbers them), and the script runs at a tiny size and prints
its RESULT line."""

import re
import subprocess
from pathlib import Path

from bench.server_client import MODEL, SAMPLES, InstantServer, ours, prompts_of
from generation.decoding import DecodingConfig
from generation.engines import ServerConfig
from generation.engines.server import PROMPTS_PER_REQUEST, ServerEngine
from tests.support import run_bench

REPO = Path(__file__).resolve().parents[2]


def test_the_server_answers_lists_only_when_it_says_it_is_vllms():
    prompts = prompts_of(PROMPTS_PER_REQUEST + 1)
    for owner in ("openai", "vllm"):
        with InstantServer(owner) as server:
            engine = ServerEngine(ServerConfig(base_url=server.url, model=MODEL, api="completions"))
            results = engine.generate(
                prompts, [8] * len(prompts), DecodingConfig(per_prompt=SAMPLES)
            )
            assert engine._batching is (owner == "vllm")
            assert all(len(texts) == SAMPLES for texts in results)
            assert ours(server.url, prompts, concurrency=2) > 0


def _script(*options: str) -> subprocess.CompletedProcess:
    return run_bench("server_client.py", *options)


def test_the_script_prints_every_client_and_its_result_line():
    run = _script("--prompts", "40", "--concurrency", "4")

    assert run.returncode == 0, run.stderr
    for label in ("ours, one prompt a request", "httpx shared client", "bare http.client", "lists"):
        assert label in run.stdout
    result = run.stdout.strip().splitlines()[-1]
    assert re.fullmatch(
        r"RESULT server_client ratio=[\d.]+ continuations_per_s=\d+ "
        r"listed_continuations_per_s=\d+ httpx_continuations_per_s=\d+ "
        r"bare_continuations_per_s=\d+ prompts=40",
        result,
    ), result


def test_bad_sizes_are_refused_with_one_line():
    run = _script("--prompts", "0")

    assert run.returncode == 2
    assert "--prompts and --concurrency must be at least 1" in run.stderr
