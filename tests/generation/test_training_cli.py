"""`python -m generation train`: pairs found under a data folder, early stopping, the quality
table at the end, and one clear line for every bad input (tiny models, no downloads)."""

import json
from pathlib import Path

import pytest
import torch

from generation import cli, training_cli
from generation.training import resolve_precision
from tests.generation.test_pairs import CAD_HEADER, _write_tsv, write_cad_folder
from tests.generation.tiny_models import tiny_lm_directory

REVIEWS = [
    ("The movie was great.", "The movie was terrible."),
    ("The acting was dull.", "The acting was lively."),
    ("I loved the ending.", "I hated the ending."),
    ("The plot is clever and fresh.", "The plot is silly and stale."),
    ("A warm and funny film.", "A cold and boring film."),
    ("The music was wonderful.", "The music was awful."),
    ("Every scene felt alive.", "Every scene felt flat."),
    ("The cast was superb.", "The cast was weak."),
    ("It is a good film.", "It is a bad film."),
    ("The story kept me hooked.", "The story bored me."),
]

# Dev reviews whose first sentences qualify as held-out originals (6 to 22 words, changed
# by the revision, labelled right by the stand-in classifier trained on REVIEWS).
DEV_REVIEWS = [
    (
        "Positive",
        "The movie was great and the acting was wonderful all the way through.",
        "The movie was terrible and the acting was awful all the way through.",
    ),
    (
        "Negative",
        "The story was dull and the ending was terrible for everyone in it.",
        "The story was lively and the ending was great for everyone in it.",
    ),
    (
        "Positive",
        "It is a good film with a warm and funny cast of characters.",
        "It is a bad film with a cold and boring cast of characters.",
    ),
]


@pytest.fixture
def one_torch_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def data_folder(root: Path, *, dev: bool = True) -> Path:
    """CAD-shaped data: ten sentiment pairs and two NLI revisions for train, and a dev split."""
    cad = write_cad_folder(root)
    rows = []
    for batch, (positive, negative) in enumerate(REVIEWS):
        rows += [["Positive", positive, str(batch)], ["Negative", negative, str(batch)]]
    _write_tsv(cad / "sentiment_combined_paired" / "train_paired.tsv", CAD_HEADER, *rows)
    if dev:
        rows = []
        for batch, (label, original, revised) in enumerate(DEV_REVIEWS):
            other = "Negative" if label == "Positive" else "Positive"
            rows += [[label, original, str(100 + batch)], [other, revised, str(100 + batch)]]
        _write_tsv(cad / "sentiment_combined_paired" / "dev_paired.tsv", CAD_HEADER, *rows)
    return cad


def run_train(capsys, *arguments: str) -> tuple[int, str, list[str]]:
    status = cli.main(["train", *arguments])
    captured = capsys.readouterr()
    return status, captured.out, captured.err.strip().splitlines()


def tiny_options(tmp_path_factory, output: Path) -> list[str]:
    base = tiny_lm_directory(tmp_path_factory, "gpt2")
    return [
        "--base-model", str(base), "--output", str(output), "--epochs", "2",
        "--batch-size", "4", "--max-length", "64", "--learning-rate", "5e-3",
        "--device", "cpu", "--quiet",
    ]  # fmt: skip


def test_train_on_every_pair_file_under_a_folder_ends_with_the_quality_table(
    tmp_path_factory, tmp_path, capsys, monkeypatch, one_torch_thread
):
    cad = data_folder(tmp_path / "data")
    output = tmp_path / "model"
    asked = {}

    def quality_table(model, data, **options):
        asked.update(model=model, data=data, **options)
        return "QUALITY TABLE"

    monkeypatch.setattr(training_cli, "quality_table", quality_table)

    status, out, err = run_train(
        capsys,
        "--data", str(tmp_path / "data"),
        *tiny_options(tmp_path_factory, output),
        "--report-originals", "3", "--report-code", "negation",
    )  # fmt: skip

    assert status == 0, err
    lines = out.strip().splitlines()
    assert lines[:3] == [
        "10 pairs from cad/sentiment_combined_paired/train",
        "1 pairs from cad/NLI_revised_hypothesis/train",
        "1 pairs from cad/NLI_revised_premise/train",
    ]
    assert lines[3].startswith("11 pairs trained on") and "1 held out" in lines[3]
    # Where and in what it trained: bf16 autocast on a CPU with bf16 arithmetic.
    assert lines[3].endswith(f" on cpu in {resolve_precision(torch.device('cpu'))}")
    assert sum("held-out loss" in line for line in lines) == 2  # one evaluation per epoch
    assert any(line.endswith("best") for line in lines)
    assert f"model saved to {output}" in lines
    # Where the time went, so a GPU slot can be sized from one run.
    timing = next(line for line in lines if line.startswith("seconds: prepare "))
    assert "steps/s)" in timing and ", evaluate " in timing and ", save " in timing
    saved = json.loads((output / "cfannotate_training.json").read_text())
    assert set(saved["phases"]) == {"prepare", "steps", "evaluate", "save"}
    assert all(seconds > 0 for seconds in saved["phases"].values())
    assert sum(saved["phases"].values()) <= saved["seconds"] + 1.0
    assert lines[-1] == "QUALITY TABLE"
    assert asked == {
        "model": output,
        "data": cad,
        "originals": 3,
        "codes": ["negation"],
        "device": "cpu",
        "seed": 0,
    }
    assert (output / "cfannotate_training.json").is_file()


def train_without_report(capsys, monkeypatch, tmp_path_factory, tmp_path, *options: str):
    """`train --no-report` of the tiny model on a data folder without a dev split (fine
    without the report, which must not run): (status, stdout, stderr lines)."""
    data_folder(tmp_path / "data", dev=False)
    monkeypatch.setattr(training_cli, "quality_table", pytest.fail)
    return run_train(
        capsys,
        "--data", str(tmp_path / "data"), "--no-report", *options,
        *tiny_options(tmp_path_factory, tmp_path / "model"),
    )  # fmt: skip


def test_no_report_skips_the_table_and_max_pairs_samples(
    tmp_path_factory, tmp_path, capsys, monkeypatch, one_torch_thread
):
    status, out, err = train_without_report(
        capsys, monkeypatch, tmp_path_factory, tmp_path, "--max-pairs", "5"
    )

    assert status == 0, err
    assert "5 pairs trained on" in out  # below ten pairs nothing is held out
    assert "held-out loss" not in out


@pytest.mark.parametrize("precision", ["bf16", "fp32"])
def test_the_precision_asked_for_is_used_and_said(
    tmp_path_factory, tmp_path, capsys, monkeypatch, one_torch_thread, precision
):
    status, out, err = train_without_report(
        capsys, monkeypatch, tmp_path_factory, tmp_path, "--precision", precision
    )

    assert status == 0, err
    assert f" on cpu in {precision}\n" in out
    saved = json.loads((tmp_path / "model" / "cfannotate_training.json").read_text())
    assert (saved["precision"], saved["config"]["precision"]) == (precision, precision)


@pytest.mark.parametrize(
    ("option", "grouped"), [((), "True"), (("--no-group-by-length",), "False")]
)
def test_batches_are_grouped_by_length_unless_told_not_to(
    tmp_path_factory, tmp_path, capsys, monkeypatch, one_torch_thread, option, grouped
):
    status, _, err = train_without_report(capsys, monkeypatch, tmp_path_factory, tmp_path, *option)

    assert status == 0, err
    saved = json.loads((tmp_path / "model" / "cfannotate_training.json").read_text())
    assert saved["config"]["group_by_length"] == grouped


def test_bf16_asked_of_a_gpu_without_it_is_refused_before_the_data_is_read(
    tmp_path, capsys, monkeypatch
):
    # A GPU without bf16 arithmetic (a V100, say), whatever this machine has.
    monkeypatch.setattr("generation.models.resolve_device", lambda name: torch.device("cuda"))
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *args, **kwargs: False)

    status, out, err = run_train(
        capsys, "--data", str(tmp_path / "nowhere"), "--output", "x", "--precision", "bf16"
    )

    assert (status, out) == (cli.EXIT_USAGE, "")
    assert err == ["train: this GPU has no bf16 arithmetic: train with precision fp32"]


def test_an_unknown_precision_is_a_usage_error(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["train", "--output", "x", "--precision", "fp16"])

    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "argument --precision: invalid choice: 'fp16'" in err and "Traceback" not in err


def test_a_missing_data_folder_is_one_line_exit_2(tmp_path, capsys):
    status, out, err = run_train(capsys, "--data", str(tmp_path / "nowhere"), "--output", "x")
    assert status == cli.EXIT_USAGE and out == ""
    assert err == [f"train: No such data folder: {tmp_path / 'nowhere'}"]


def test_a_folder_without_pairs_is_one_line_exit_2(tmp_path, capsys):
    status, _, err = run_train(capsys, "--data", str(tmp_path), "--output", "x")
    assert status == cli.EXIT_USAGE
    assert len(err) == 1 and err[0].startswith(f"train: No paired data under {tmp_path}")


def test_a_malformed_row_is_one_line_naming_file_and_line(tmp_path, capsys):
    cad = data_folder(tmp_path)
    path = cad / "NLI_revised_premise" / "train.tsv"
    path.write_text(path.read_text() + "A premise without its hypothesis\n")

    status, _, err = run_train(capsys, "--data", str(tmp_path), "--output", "x")

    assert status == cli.EXIT_USAGE
    assert err == [f"train: {path}:3: 1 fields where the header has 3 (a tab missing or extra)."]


def test_missing_report_data_is_refused_before_training(tmp_path, capsys):
    data_folder(tmp_path / "data", dev=False)
    output = tmp_path / "model"

    status, _, err = run_train(capsys, "--data", str(tmp_path / "data"), "--output", str(output))

    assert status == cli.EXIT_USAGE
    assert len(err) == 1 and err[0].startswith(
        "train: no sentiment_combined_paired/dev_paired.tsv in"
    )
    assert err[0].endswith("name the CAD folder with --report-data or pass --no-report")
    assert not output.exists()


def test_report_originals_must_be_positive(tmp_path, capsys):
    status, _, err = run_train(
        capsys, "--data", str(tmp_path), "--output", "x", "--report-originals", "0"
    )
    assert status == cli.EXIT_USAGE
    assert err == ["train: --report-originals must be at least 1"]


@pytest.mark.parametrize("limit", ["0", "-1", "nan"])
def test_time_limit_must_be_positive(tmp_path, capsys, limit):
    status, _, err = run_train(
        capsys, "--data", str(tmp_path), "--output", "x", "--time-limit", limit
    )
    assert status == cli.EXIT_USAGE
    assert err == ["train: --time-limit must be more than 0 minutes"]


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--eval-batch-size", "0", "--eval-batch-size must be at least 1"),
        ("--checkpoint-every", "-1", "--checkpoint-every must be 0 minutes or more"),
        ("--checkpoint-every", "nan", "--checkpoint-every must be 0 minutes or more"),
    ],
)
def test_evaluation_and_checkpoint_options_are_checked(tmp_path, capsys, option, value, message):
    status, _, err = run_train(
        capsys, "--data", str(tmp_path / "nowhere"), "--output", "x", option, value
    )
    assert status == cli.EXIT_USAGE
    assert err == [f"train: {message}"]


def test_a_time_limit_ends_training_and_says_so(
    tmp_path_factory, tmp_path, capsys, monkeypatch, one_torch_thread
):
    # A limit of 0.0001 minutes (6 ms) is past after the first step.
    status, out, err = train_without_report(
        capsys, monkeypatch, tmp_path_factory, tmp_path, "--time-limit", "0.0001"
    )

    assert status == 0, err
    stopped = "stopped at the time limit (0.0001 min) after 1 step; the best checkpoint was kept"
    assert stopped in out
    assert "held-out loss" in out  # the step was evaluated and saved
    assert (tmp_path / "model" / "config.json").is_file()


def test_a_device_this_machine_lacks_is_refused_before_the_data_is_read(tmp_path, capsys):
    status, _, err = run_train(
        capsys, "--data", str(tmp_path / "nowhere"), "--output", "x", "--device", "tpu"
    )
    assert status == cli.EXIT_USAGE
    assert err == ["train: Unknown device 'tpu': use 'auto', 'cpu', 'cuda' or 'cuda:N'."]


@pytest.mark.slow
def test_the_trained_model_gets_the_real_quality_table(
    tmp_path_factory, tmp_path, capsys, monkeypatch, one_torch_thread
):
    data_folder(tmp_path / "data")
    output = tmp_path / "model"
    base = str(tiny_lm_directory(tmp_path_factory, "gpt2"))
    real = training_cli.quality_table
    # The real report, with the tiny model as the fluency filter's LM instead of SmolLM2.
    monkeypatch.setattr(
        training_cli,
        "quality_table",
        lambda model, data, **options: real(model, data, fluency_model=base, **options),
    )

    status, out, err = run_train(
        capsys,
        "--data", str(tmp_path / "data"),
        *tiny_options(tmp_path_factory, output),
        "--report-originals", "2", "--report-code", "negation",
    )  # fmt: skip

    assert status == 0, err
    table = out.split(f"model saved to {output}\n", 1)[1]
    assert table.strip().splitlines()[0].split()[:3] == ["figure", "ours", "filters"]
    assert "special-token leaks (kept or dropped)" in table
    assert f"model {output} on cpu; codes negation" in table
    assert "2 originals (3 qualified)" in table


def test_the_pace_is_in_steps_a_second_or_seconds_a_step():
    assert training_cli._pace(537, 140.0) == "3.8 steps/s"
    assert training_cli._pace(102, 1286.6) == "12.6 s/step"  # a 2-core CPU's
    assert training_cli._pace(10, 10.0) == "1.0 steps/s"
