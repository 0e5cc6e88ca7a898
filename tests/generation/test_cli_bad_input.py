"""`python -m generation` refuses bad input in one line naming the option, exit status 2,
before any slow work: no model loads, no training, no evaluation runs in these tests."""

import os
from pathlib import Path

import pytest

from generation import cli, training_cli
from tests.generation.test_pairs import CAD_HEADER, _write_tsv, write_cad_folder

SENTENCE = "The film was great."


class SlowWorkStarted(Exception):
    """Raised in place of training, generating or evaluating: the check came too late."""


def _slow_work(*args, **kwargs):
    raise SlowWorkStarted


@pytest.fixture(autouse=True)
def no_slow_work(monkeypatch):
    """Training, generation and evaluation raise SlowWorkStarted instead of running."""
    monkeypatch.setattr(training_cli, "train", _slow_work)
    monkeypatch.setattr("generation.pipeline.perturb_texts", _slow_work)
    monkeypatch.setattr("generation.pipeline.run_polyjuice", _slow_work)
    monkeypatch.setattr("generation.quality_report.evaluate", _slow_work)


def run(capsys, *arguments: str) -> tuple[int, str]:
    """`python -m generation ARGUMENTS`: the exit status and the one line it printed."""
    status = cli.main(list(arguments))
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "Traceback" not in captured.err
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    return status, lines[0]


def refused_by_argparse(capsys, *arguments: str) -> str:
    """The error line argparse printed for ARGUMENTS, after checking it exited with 2."""
    with pytest.raises(SystemExit) as exited:
        cli.main(list(arguments))
    assert exited.value.code == cli.EXIT_USAGE
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err.strip().splitlines()[-1]


@pytest.fixture
def pairs(tmp_path) -> Path:
    path = tmp_path / "pairs.jsonl"
    path.write_text('{"x": "a b", "x_hat": "a c"}\n{"x": "d e", "x_hat": "d f"}\n')
    return path


def train_args(pairs: Path, output: Path, *options: str) -> list[str]:
    return [
        "train", "--pairs", str(pairs), "--output", str(output), "--no-report",
        "--device", "cpu", "--quiet", *options,
    ]  # fmt: skip


# 1. --output ---------------------------------------------------------------------------


def test_train_refuses_an_output_that_is_a_file_before_training(capsys, tmp_path, pairs):
    output = tmp_path / "model"
    output.write_text("not a model")

    status, line = run(capsys, *train_args(pairs, output, "--max-pairs", "1"))

    assert status == cli.EXIT_USAGE
    assert (
        line
        == f"train: --output {output}: cannot save the model there: it is a file, not a directory"
    )
    assert output.read_text() == "not a model"


def test_train_refuses_an_output_below_a_file(capsys, tmp_path, pairs):
    (tmp_path / "file").write_text("")
    output = tmp_path / "file" / "deeper" / "model"

    status, line = run(capsys, *train_args(pairs, output))

    assert status == cli.EXIT_USAGE
    assert line.startswith(f"train: --output {output}: cannot save the model there: ")
    assert line.endswith(f"{tmp_path / 'file'} is a file, not a directory")


def test_train_refuses_an_output_directory_of_other_files(capsys, tmp_path, pairs):
    output = tmp_path / "notes"
    output.mkdir()
    (output / "todo.txt").write_text("keep me")

    status, line = run(capsys, *train_args(pairs, output))

    assert status == cli.EXIT_USAGE
    assert line.startswith(f"train: --output {output}: cannot save the model there: ")
    assert "holds files but no model" in line
    assert (output / "todo.txt").read_text() == "keep me"


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write anywhere")
def test_train_refuses_an_output_in_a_directory_it_cannot_write(capsys, tmp_path, pairs):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    try:
        status, line = run(capsys, *train_args(pairs, locked / "model"))
    finally:
        locked.chmod(0o755)

    assert status == cli.EXIT_USAGE
    assert line.endswith(f"no permission to write in {locked}")


@pytest.mark.parametrize("existing", ["new", "empty", "model"])
def test_train_accepts_a_new_an_empty_or_a_model_output(tmp_path, pairs, existing):
    output = tmp_path / "model"
    if existing != "new":
        output.mkdir()
    if existing == "model":
        (output / "config.json").write_text("{}")  # an earlier run's model, overwritten

    with pytest.raises(SlowWorkStarted):
        cli.main(train_args(pairs, output))


# 2. --json -----------------------------------------------------------------------------


@pytest.fixture
def cad(tmp_path) -> Path:
    return write_cad_folder(tmp_path / "data")


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("missing/r.json", "there is no directory {tmp}/missing"),
        ("folder", "it is a directory; name a file"),
        ("file/r.json", "{tmp}/file is a file, not a directory"),
    ],
)
def test_evaluate_refuses_a_json_it_cannot_write_before_evaluating(
    capsys, tmp_path, cad, name, problem
):
    (tmp_path / "folder").mkdir()
    (tmp_path / "file").write_text("")
    json_path = tmp_path / name

    status, line = run(
        capsys, "evaluate", "--data", str(cad), "--originals", "1", "--json", str(json_path)
    )

    assert status == cli.EXIT_USAGE
    assert line == f"evaluate: --json {json_path}: cannot write: " + problem.format(tmp=tmp_path)


def test_evaluate_with_a_writable_json_goes_on_to_evaluate(tmp_path, cad):
    with pytest.raises(SlowWorkStarted):
        cli.main(["evaluate", "--data", str(cad), "--json", str(tmp_path / "r.json")])


# 3. --max-pairs ------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["-1", "0"])
def test_max_pairs_below_one_is_refused(capsys, tmp_path, pairs, value):
    line = refused_by_argparse(capsys, *train_args(pairs, tmp_path / "model", "--max-pairs", value))

    assert line.endswith(f"argument --max-pairs: must be at least 1, not {value}")


# 4. a directory where a file is expected -----------------------------------------------


def test_perturb_file_that_is_a_directory_is_one_line(capsys, tmp_path):
    status, line = run(capsys, "perturb", "--file", str(tmp_path))

    assert status == cli.EXIT_USAGE
    assert line == f"perturb: --file {tmp_path}: a directory, not a text file"


def test_perturb_file_that_is_missing_names_the_option(capsys, tmp_path):
    status, line = run(capsys, "perturb", "--file", str(tmp_path / "missing.txt"))

    assert status == cli.EXIT_USAGE
    assert line == f"perturb: --file {tmp_path / 'missing.txt'}: no such file"


def test_train_pairs_that_is_a_directory_is_one_line(capsys, tmp_path):
    folder = tmp_path / "pairs"
    folder.mkdir()

    status, line = run(capsys, *train_args(folder, tmp_path / "model"))

    assert status == cli.EXIT_USAGE
    assert line == f"train: --pairs {folder}: a directory, not a file of pairs"
    assert not (tmp_path / "model").exists()


def test_any_os_error_is_one_line_naming_the_file(capsys, monkeypatch):
    def unreadable(args):
        raise PermissionError(13, "Permission denied", "secret.txt")

    monkeypatch.setattr(cli, "_read_texts", unreadable)

    status, line = run(capsys, "perturb", SENTENCE)

    assert (status, line) == (cli.EXIT_USAGE, "perturb: secret.txt: Permission denied")


# 6. numbers out of range ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("option", "value", "problem"),
    [
        ("--n", "0", "must be at least 1, not 0"),
        ("--blank-sets", "-1", "must be at least 0, not -1"),
        ("--batch-size", "0", "must be at least 1, not 0"),
        ("--beams", "-3", "must be at least 1, not -3"),
        ("--beams", "0", "must be at least 1, not 0"),
        ("--threshold", "-5", "must be 0 or more, not -5"),
        ("--threshold", "nan", "must be a finite number, not nan"),
        ("--temperature", "0", "must be more than 0, not 0"),
        ("--top-p", "1.5", "must be more than 0 and at most 1, not 1.5"),
        ("--server-concurrency", "0", "must be at least 1, not 0"),
        ("--server-timeout", "-1", "must be more than 0, not -1"),
        ("--server-retries", "-1", "must be at least 0, not -1"),
        ("--n", "two", "'two' is not a whole number"),
    ],
)
def test_perturb_numbers_out_of_range_are_refused_naming_the_option(capsys, option, value, problem):
    line = refused_by_argparse(
        capsys, "perturb", SENTENCE, "--code", "negation", "--device", "cpu", option, value
    )

    assert line.endswith(f"argument {option}: {problem}")


@pytest.mark.parametrize(
    ("option", "value", "problem"),
    [
        ("--blank-sets", "-1", "must be at least 0, not -1"),
        ("--flip-weight", "-1", "must be 0 or more, not -1"),
        ("--temperature", "-1", "must be more than 0, not -1"),
        ("--top-p", "0", "must be more than 0 and at most 1, not 0"),
    ],
)
def test_evaluate_numbers_out_of_range_are_refused_naming_the_option(
    capsys, cad, option, value, problem
):
    line = refused_by_argparse(capsys, "evaluate", "--data", str(cad), option, value)

    assert line.endswith(f"argument {option}: {problem}")


@pytest.mark.parametrize(
    ("option", "value", "problem"),
    [
        ("--epochs", "0", "must be at least 1, not 0"),
        ("--batch-size", "-2", "must be at least 1, not -2"),
        ("--max-length", "0", "must be at least 1, not 0"),
        ("--learning-rate", "0", "must be more than 0, not 0"),
        ("--eval-fraction", "1", "must be 0 or more and less than 1, not 1"),
        ("--eval-every", "-1", "must be at least 0, not -1"),
        ("--patience", "0", "must be at least 1, not 0"),
        ("--min-delta", "-0.1", "must be 0 or more, not -0.1"),
    ],
)
def test_train_numbers_out_of_range_are_refused_naming_the_option(
    capsys, tmp_path, pairs, option, value, problem
):
    line = refused_by_argparse(capsys, *train_args(pairs, tmp_path / "model", option, value))

    assert line.endswith(f"argument {option}: {problem}")


def test_beam_search_and_sampling_still_run(pairs):
    # --beams 1 samples; a wider beam returns up to --beams candidates per prompt.
    for beams in ("1", "3"):
        with pytest.raises(SlowWorkStarted):
            cli.main(["perturb", SENTENCE, "--beams", beams, "--n", "3", "--device", "cpu"])


def test_more_candidates_than_beams_is_one_line_naming_both_options(capsys):
    status, line = run(capsys, "perturb", SENTENCE, "--beams", "2", "--n", "3")

    assert status == cli.EXIT_USAGE
    assert line.startswith("perturb: --n 3 asks for more candidates than --beams 2 can return")


# 7. options the chosen generator would ignore ------------------------------------------


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (
            ["--code", "negation", "--option", "a=1"],
            "--generator polyjuice takes no --option; only the other generators read it.",
        ),
        (
            ["--label", "positive"],
            "--generator polyjuice takes no --label; only the other generators read it.",
        ),
        (
            ["--generator", "lexicon-remove", "--label", "positive", "--code", "negation"],
            "--generator lexicon-remove takes no --code; only polyjuice reads it.",
        ),
        (
            ["--generator", "causal-negation", "--blank", "The [BLANK] was great."],
            "--generator causal-negation takes no --blank; only polyjuice reads it.",
        ),
    ],
)
def test_options_the_generator_ignores_are_refused(capsys, arguments, message):
    status, line = run(capsys, "perturb", SENTENCE, *arguments)

    assert (status, line) == (cli.EXIT_USAGE, f"perturb: {message}")


def test_a_generator_that_skips_every_original_for_its_label_says_pass_label(capsys):
    status = cli.main(["perturb", "--generator", "lexicon-remove", "--no-filter", SENTENCE])

    captured = capsys.readouterr()
    assert status == cli.EXIT_USAGE
    assert captured.out == ""
    skipped, hint = captured.err.strip().splitlines()[-2:]
    assert skipped.startswith("skipped x1: label '' is neither positive")
    assert hint.startswith(
        "perturb: lexicon-remove needs the originals' label: pass it with --label"
    )


def test_a_label_the_generator_does_not_convert_says_what_to_pass(capsys):
    status = cli.main(
        ["perturb", "--generator", "lexicon-remove", "--label", "happy", "--no-filter", SENTENCE]
    )

    hint = capsys.readouterr().err.strip().splitlines()[-1]
    assert status == cli.EXIT_USAGE
    assert hint.startswith("perturb: lexicon-remove does not convert the label 'happy'")
    assert "--label" in hint


# 8. files that are not UTF-8 -----------------------------------------------------------

LATIN_1 = "fine line\ncaf\u00e9 au lait\n".encode("latin-1")


def test_perturb_file_not_utf8_names_the_file_and_line(capsys, tmp_path):
    path = tmp_path / "latin.txt"
    path.write_bytes(LATIN_1)

    status, line = run(capsys, "perturb", "--file", str(path))

    assert status == cli.EXIT_USAGE
    assert line == f"perturb: {path}:2: not UTF-8 text (byte 0xe9); save the file as UTF-8."


def test_train_pairs_not_utf8_names_the_file_and_line(capsys, tmp_path):
    path = tmp_path / "latin.tsv"
    path.write_bytes(b"x\tx_hat\nok\tfine\n" + "caf\u00e9\tb\n".encode("latin-1"))

    status, line = run(capsys, *train_args(path, tmp_path / "model"))

    assert status == cli.EXIT_USAGE
    assert line == f"train: {path}:3: not UTF-8 text (byte 0xe9); save the file as UTF-8."


def test_train_data_folder_file_not_utf8_names_the_file_and_line(capsys, tmp_path):
    cad = write_cad_folder(tmp_path / "data")
    path = cad / "sentiment_combined_paired" / "train_paired.tsv"
    _write_tsv(path, CAD_HEADER, ["Positive", "Good.", "1"], ["Negative", "Bad.", "1"])
    path.write_bytes(path.read_bytes() + "Positive\tCaf\u00e9.\t2\n".encode("latin-1"))

    status, line = run(
        capsys, "train", "--data", str(tmp_path / "data"), "--output", str(tmp_path / "m"),
        "--no-report", "--device", "cpu",
    )  # fmt: skip

    assert status == cli.EXIT_USAGE
    assert line == f"train: {path}:4: not UTF-8 text (byte 0xe9); save the file as UTF-8."
