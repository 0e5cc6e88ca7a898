"""`python -m generation` as a user runs it: JSON lines on stdout, errors as one line on stderr.

A fresh interpreter runs what depends on it (the entry point, the environment); the other
behaviours call `cli.main` in this process, which parses the same arguments.
"""

import io
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from generation import cli
from generation.models import DOWNLOADS_ENV
from generation.polyjuice import DEFAULT_CODES
from generation.sanity import REASONS
from tests.generation.scripted_models import scripted_lm_directory

REPO = Path(__file__).parents[2]
JSON_KEYS = {
    "original",
    "text",
    "generator",
    "code_requested",
    "code",
    "blanked",
    "edit",
    "fluency",
    "kept",
    "dropped_by",
}
KIDS = "It is great for kids."
MOVIE = "The movie was great."
BLANKED = "It is [BLANK] for kids."


@dataclass(frozen=True)
class Finished:
    returncode: int
    stdout: str
    stderr: str
    seconds: float = 0.0

    def json_lines(self) -> list[dict]:
        return [json.loads(line) for line in self.stdout.splitlines()]


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory) -> str:
    return str(scripted_lm_directory(tmp_path_factory))


@pytest.fixture(scope="module")
def subprocess_runs(model_dir) -> dict[str, Finished]:
    """The command lines that must run in a fresh interpreter, started together.

    Each interpreter spends seconds importing torch and spaCy, so the other behaviours are
    checked by calling `cli.main` in this process instead.
    """
    commands = {
        "args": _perturb(model_dir, KIDS, MOVIE),
        "hub_id": ["perturb", "--model", "some-org/not-cached-model", "--quiet", KIDS],
    }
    started = {name: _start(args) for name, args in commands.items()}
    return {name: _finish(*process) for name, process in started.items()}


def _start(args: list[str]) -> tuple[subprocess.Popen, float]:
    # No downloads, and no settings that would hide progress bars from the --quiet check.
    hidden = {DOWNLOADS_ENV, "HF_HUB_DISABLE_PROGRESS_BARS", "TRANSFORMERS_VERBOSITY"}
    env = {key: value for key, value in os.environ.items() if key not in hidden}
    env["HF_HUB_OFFLINE"] = "1"
    env["OMP_NUM_THREADS"] = "1"  # tiny models; spare a CPU that other jobs may share
    process = subprocess.Popen(
        [sys.executable, "-m", "generation", *args],
        cwd=REPO,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
    )
    return process, time.perf_counter()


def _finish(process: subprocess.Popen, started: float) -> Finished:
    try:
        stdout, stderr = process.communicate(timeout=180)
    except subprocess.TimeoutExpired:
        process.kill()
        stdout, stderr = process.communicate()
        pytest.fail(f"{process.args} ran past 180 s; stderr: {stderr[-2000:]}")
    return Finished(process.returncode, stdout, stderr, time.perf_counter() - started)


@pytest.fixture
def run_main(monkeypatch, capsys):
    """`python -m generation ARGS` in this process, with `stdin` as its standard input."""
    monkeypatch.delenv(DOWNLOADS_ENV, raising=False)
    monkeypatch.chdir(REPO)

    def run(*args: str, stdin: str = "") -> Finished:
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
        status = cli.main(list(args))
        out, err = capsys.readouterr()
        return Finished(status, out, err)

    return run


def _perturb(model_dir: str, *args: str) -> list[str]:
    return ["perturb", "--model", model_dir, "--no-filter", "--n", "2", "--quiet", *args]


def _assert_one_line_error(run: Finished, command: str) -> str:
    assert run.returncode == cli.EXIT_USAGE
    assert run.stdout == ""
    assert "Traceback" not in run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr
    assert lines[0].startswith(f"{command}: ")
    return lines[0]


def _originals(run: Finished) -> set[str]:
    assert run.returncode == 0, run.stderr
    return {line["original"] for line in run.json_lines()}


def test_perturb_prints_one_json_object_per_line(subprocess_runs):
    run = subprocess_runs["args"]

    assert run.returncode == 0, run.stderr
    assert "Traceback" not in run.stderr
    lines = run.json_lines()
    assert lines
    for line in lines:
        assert set(line) == JSON_KEYS
        assert line["original"] in {KIDS, MOVIE}
        assert line["generator"] == "polyjuice"
        assert line["code_requested"] in DEFAULT_CODES
        assert "[BLANK]" in line["blanked"]
        assert "[BLANK]" not in line["text"]
        assert line["text"] != line["original"]
        assert isinstance(line["edit"], dict)
        # --no-filter: nothing scored, nothing dropped but by the sanity filters.
        assert line["fluency"] is None
        assert line["kept"] is (line["dropped_by"] is None)
        assert line["dropped_by"] in (None, *REASONS)
    assert {line["original"] for line in lines} == {KIDS, MOVIE}
    # The scripted model answers `not`, so the whole-sentence rewrite of each text is "not".
    assert {line["text"] for line in lines if line["blanked"] == "[BLANK]"} == {"not"}


def test_quiet_perturb_writes_nothing_on_stderr(subprocess_runs):
    run = subprocess_runs["args"]

    assert run.returncode == 0
    assert run.stderr == ""


def test_uncached_hub_id_fails_fast_when_downloads_are_off(subprocess_runs):
    run = subprocess_runs["hub_id"]
    line = _assert_one_line_error(run, "perturb")

    assert "some-org/not-cached-model" in line
    assert "downloads are off" in line
    assert DOWNLOADS_ENV in line
    # Started beside another command on a shared CPU; a network wait would add minutes.
    assert run.seconds < 90


def test_perturb_reads_texts_from_stdin(run_main, model_dir):
    run = run_main(*_perturb(model_dir), stdin=f"{KIDS}\n\n{MOVIE}\n")

    assert _originals(run) == {KIDS, MOVIE}


def test_perturb_reads_a_dash_as_stdin(run_main, model_dir):
    run = run_main(*_perturb(model_dir, "-"), stdin=f"{MOVIE}\n")

    assert _originals(run) == {MOVIE}


def test_perturb_reads_texts_from_a_file(run_main, model_dir, tmp_path):
    texts = tmp_path / "texts.txt"
    texts.write_text(f"{KIDS}\n\n  {MOVIE}  \n", encoding="utf-8")

    run = run_main(*_perturb(model_dir, "--file", str(texts)), stdin="ignored.\n")

    # Blank lines are skipped and surrounding spaces stripped; stdin is not read.
    assert _originals(run) == {KIDS, MOVIE}


def test_perturb_output_does_not_depend_on_where_the_texts_came_from(
    run_main, model_dir, subprocess_runs
):
    def lines(run: Finished) -> list[tuple]:
        return sorted((d["original"], d["blanked"], d["text"]) for d in run.json_lines())

    from_stdin = run_main(*_perturb(model_dir), stdin=f"{KIDS}\n{MOVIE}\n")

    assert lines(from_stdin) == lines(subprocess_runs["args"])


def test_perturb_passes_explicit_blanks_through(run_main, model_dir):
    run = run_main(*_perturb(model_dir, "--blank", BLANKED, KIDS))

    assert run.returncode == 0, run.stderr
    lines = run.json_lines()
    assert lines
    assert all(line["blanked"] == BLANKED for line in lines)
    assert {line["text"] for line in lines} == {"It is not for kids."}


def test_perturb_code_option_limits_the_codes(run_main, model_dir):
    run = run_main(*_perturb(model_dir, "--code", "quantifier", "--code", "shuffle", KIDS))

    assert run.returncode == 0, run.stderr
    requested = {line["code_requested"] for line in run.json_lines()}
    # The scripted model gives every code the same answers, so duplicates leave the first code.
    assert requested == {"quantifier"}


def test_perturb_summarises_on_stderr_unless_quiet(run_main, model_dir):
    args = ["perturb", "--model", model_dir, "--no-filter", "--n", "1", "--code", "negation"]

    loud = run_main(*args, KIDS, MOVIE)
    quiet = run_main(*args, "--quiet", KIDS, MOVIE)

    assert loud.returncode == quiet.returncode == 0
    assert loud.stdout == quiet.stdout
    assert "2 original(s):" in loud.stderr
    kept = sum(line["kept"] for line in loud.json_lines())
    assert f"{kept} kept." in loud.stderr
    assert "original(s)" not in quiet.stderr


def test_perturb_without_texts_is_a_usage_error(run_main, model_dir):
    line = _assert_one_line_error(run_main(*_perturb(model_dir), stdin=""), "perturb")

    assert "give texts" in line


def test_missing_model_directory_is_one_line_naming_the_path(run_main, tmp_path):
    missing = tmp_path / "missing-model"

    line = _assert_one_line_error(run_main("perturb", "--model", str(missing), KIDS), "perturb")

    assert str(missing) in line
    assert "No model directory" in line


def test_missing_relative_model_directory_is_one_line_naming_it(run_main):
    assert not (REPO / "missing-model").exists()

    line = _assert_one_line_error(
        run_main("perturb", "--model", "./missing-model", KIDS), "perturb"
    )

    assert "./missing-model" in line


def test_invalid_decoding_options_are_one_line(run_main, model_dir):
    line = _assert_one_line_error(
        run_main("perturb", "--model", model_dir, "--beams", "2", "--n", "3", KIDS), "perturb"
    )

    assert "--n 3" in line and "--beams 2" in line


def test_train_with_a_missing_pairs_file_is_one_line(run_main, tmp_path):
    pairs = tmp_path / "missing.jsonl"

    line = _assert_one_line_error(
        run_main("train", "--pairs", str(pairs), "--output", str(tmp_path / "out")), "train"
    )

    assert str(pairs) in line
    assert not (tmp_path / "out").exists()


def test_missing_relative_model_directory_is_reported_as_a_directory(run_main):
    line = _assert_one_line_error(
        run_main("perturb", "--model", "./missing-model", KIDS), "perturb"
    )

    assert "No model directory" in line


def test_perturb_takes_any_registered_generator(capsys):
    from generation.cli import main

    code = main(
        [
            "perturb",
            "--generator",
            "causal-negation",
            "--label",
            "causal",
            "--no-filter",
            "--quiet",
            "TyG is effective to identify individuals at risk for NAFLD.",
        ]
    )
    out = capsys.readouterr()
    assert code == 0
    lines = [json.loads(line) for line in out.out.splitlines()]
    assert [line["text"] for line in lines] == [
        "TyG is ineffective to identify individuals at risk for NAFLD."
    ]
    assert lines[0]["generator"] == "causal-negation"


def test_perturb_reports_skipped_originals_and_bad_options(capsys):
    from generation.cli import main

    assert (
        main(
            [
                "perturb",
                "--generator",
                "causal-negation",
                "--no-filter",
                "--quiet",
                "Der Hund bellt sehr laut heute",
            ]
        )
        == 2  # nothing at all came out
    )
    skipped, summary = capsys.readouterr().err.strip().splitlines()
    assert skipped.startswith("skipped x1: not English")
    assert summary == "perturb: causal-negation skipped every original (the reasons are above)."
    assert main(["perturb", "--generator", "causal-negation", "--option", "bogus=1", "a b"]) == 2
    assert "unknown option(s) bogus" in capsys.readouterr().err
    assert main(["perturb", "--generator", "causal-negation", "--option", "novalue", "a b"]) == 2


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        (["--engine", "server"], "--engine server needs --server-url and --server-model"),
        (
            ["--engine", "server", "--server-url", "gpu:8000", "--server-model", "m"],
            "server_url must start with http:// or https://",
        ),
        (["--server-url", "http://gpu:8000/v1"], "--server-url needs --engine server"),
    ],
)
def test_server_options_are_checked_before_anything_loads(capsys, arguments, expected):
    from generation.cli import main

    assert main(["perturb", *arguments, "The movie was great."]) == 2
    error = capsys.readouterr().err.strip()
    assert error.startswith("perturb: ") and expected in error and "\n" not in error


def test_a_bad_dtype_is_refused_in_one_line_before_any_model_loads(capsys):
    with pytest.raises(SystemExit) as exited:
        cli.main(["perturb", "--dtype", "int8", "It is great for kids."])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "argument --dtype: invalid choice: 'int8'" in err and "Traceback" not in err
