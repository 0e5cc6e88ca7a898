"""`manage.py evaluate`: prints Table 2 or Table 3, stores the run, one clear line on bad input."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from cfannotate.evaluation.models import Evaluation
from tests.evaluation.conftest import exact_predictions


def _write_jsonl(path, rows):
    path.write_text("\n".join(json.dumps(row) for row in rows) + "\n", encoding="utf-8")
    return str(path)


def test_table2_from_a_predictions_file(labeled, tmp_path):
    predictions = _write_jsonl(tmp_path / "p.jsonl", exact_predictions(labeled))
    out, err = StringIO(), StringIO()

    call_command(
        "evaluate", str(labeled.campaign.id), "--predictions", predictions, stdout=out, stderr=err
    )

    lines = out.getvalue().splitlines()
    assert lines[0].startswith("Table 2, contrast set: Uploaded predictions")
    assert any(line.startswith("Contrast set") and " 50.0 " in line for line in lines)
    assert any(line.startswith("Consistency") and line.endswith("1/2") for line in lines)
    assert any(line.startswith("Drop") and "+0.0" in line for line in lines)
    assert err.getvalue().strip() == f"Stored as evaluation {Evaluation.objects.get().id}."


def test_table3_as_json_by_slug(evaluable):
    out = StringIO()

    call_command(
        "evaluate",
        evaluable.campaign.slug,
        "--kind",
        "table3",
        "--test-fraction",
        "0.5",
        "--seeds",
        "0",
        "1",
        "--json",
        stdout=out,
    )

    payload = json.loads(out.getvalue())
    assert (payload["kind"], payload["source"]) == ("table3", "baseline")
    assert payload["parameters"]["seeds"] == [0, 1]
    assert len(payload["result"]["splits"]) == 2


def test_table3_prints_comp_and_aug(evaluable):
    out = StringIO()
    call_command(
        "evaluate",
        str(evaluable.campaign.id),
        "--kind",
        "table3",
        "--seeds",
        "0",
        stdout=out,
        stderr=StringIO(),
    )
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("Table 3, augmentation: 1 split, seeds [0]")
    assert [line.split()[2] for line in lines[2:]] == ["comp", "aug"]


def test_bad_input_is_one_clear_line(labeled, tmp_path):
    with pytest.raises(CommandError, match="No campaign with id or slug 'nope'"):
        call_command("evaluate", "nope")
    with pytest.raises(CommandError, match="Cannot read the predictions file"):
        call_command("evaluate", str(labeled.campaign.id), "--predictions", str(tmp_path / "x"))
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"id": 1}\n[1]\n', encoding="utf-8")
    with pytest.raises(CommandError, match="line 2: Each line must be a JSON object"):
        call_command("evaluate", str(labeled.campaign.id), "--predictions", str(broken))
    latin1 = tmp_path / "latin1.jsonl"
    latin1.write_bytes(b'{"id": "caf\xe9", "label": "positive"}\n')
    with pytest.raises(CommandError, match=r"not UTF-8 text: line 1 has the byte 0xE9") as caught:
        call_command("evaluate", str(labeled.campaign.id), "--predictions", str(latin1))
    assert "encoding='utf-8'" in str(caught.value) and "\n" not in str(caught.value)
    incomplete = _write_jsonl(tmp_path / "p.jsonl", exact_predictions(labeled)[:3])
    with pytest.raises(CommandError, match="The predictions are incomplete"):
        call_command("evaluate", str(labeled.campaign.id), "--predictions", incomplete)
    with pytest.raises(CommandError, match="are for Table 2"):
        call_command(
            "evaluate", str(labeled.campaign.id), "--kind", "table3", "--train", incomplete
        )
    assert not Evaluation.objects.exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--n", "5", "--m", "3", "--seeds", "7"],
            "--n is for Table 3 (--kind table3); it does not go with --kind table2, the default.",
        ),
        (
            ["--kind", "table2", "--test-fraction", "0.5"],
            "--test-fraction is for Table 3 (--kind table3); it does not go with --kind table2, "
            "the default.",
        ),
        (
            ["--kind", "table3", "--folds", "3"],
            "--folds is for Table 2; it does not go with --kind table3.",
        ),
        (
            ["--kind", "table3", "--bootstrap", "200"],
            "--bootstrap is for Table 2; it does not go with --kind table3.",
        ),
        (
            ["--folds", "3", "--predictions", "p.jsonl"],
            "--folds does not go with --predictions: folds are for the baseline cross-fitted "
            "on the campaign's originals, when neither file is given.",
        ),
    ],
)
def test_options_of_the_other_table_are_refused_and_nothing_is_stored(labeled, args, message):
    with pytest.raises(CommandError) as caught:
        call_command("evaluate", str(labeled.campaign.id), *args)
    assert str(caught.value) == message
    assert not Evaluation.objects.exists()
