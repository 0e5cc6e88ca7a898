"""`manage.py train_generator`: the options of `python -m generation train`, as they are or
after `--`, and its errors as one line."""

import pytest
from django.core.management import execute_from_command_line

from generation import cli


@pytest.fixture
def forwarded(monkeypatch) -> list[list[str]]:
    """The argument lists the command hands to `python -m generation`."""
    calls = []

    def main(argv):
        calls.append(list(argv))
        return 0

    monkeypatch.setattr(cli, "main", main)
    return calls


@pytest.mark.parametrize("separator", [["--"], []])
def test_options_go_to_generation_train_with_or_without_a_leading_double_dash(forwarded, separator):
    options = ["--pairs", "pairs.jsonl", "--output", "model", "--no-report"]

    execute_from_command_line(["manage.py", "train_generator", *separator, *options])

    assert forwarded == [["train", *options]]


def test_a_pairs_directory_after_double_dash_is_one_line_exit_2(tmp_path, capsys):
    options = ["--pairs", str(tmp_path), "--output", str(tmp_path / "model"), "--no-report"]

    with pytest.raises(SystemExit) as exited:
        execute_from_command_line(["manage.py", "train_generator", "--", *options])

    assert exited.value.code == cli.EXIT_USAGE
    err = capsys.readouterr().err
    assert err.strip() == f"train: --pairs {tmp_path}: a directory, not a file of pairs"
    assert not (tmp_path / "model").exists()
