"""`manage.py export`: to a file or standard output; one clear line on bad input."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command


def test_export_to_a_file_says_how_many_rows(labeled, tmp_path):
    path = tmp_path / "contrast.jsonl"
    err = StringIO()

    call_command("export", str(labeled.campaign.id), "contrast", output=str(path), stderr=err)

    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert [row["candidate_id"] for row in rows] == [
        labeled.candidates["a1"].id,
        labeled.candidates["b1"].id,
    ]
    assert err.getvalue().strip() == f"Wrote 2 rows to {path}."


def test_export_csv_to_standard_output_by_slug(labeled):
    out = StringIO()

    call_command(
        "export",
        labeled.campaign.slug,
        "judgments",
        "--format",
        "csv",
        "--include-gold",
        stdout=out,
    )

    lines = out.getvalue().splitlines()
    assert lines[0].startswith("judgment_id,round_kind,assignment_id,worker_id,")
    assert len(lines) == 1 + 54  # 27 real, 18 gold, 9 training


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["424242", "contrast"], "No campaign with id or slug '424242'."),
        (["no-such-campaign", "contrast"], "No campaign with id or slug 'no-such-campaign'."),
        (["{campaign}", "everything"], "Unknown export 'everything'; choose one of:"),
        (["{campaign}", "contrast", "--format", "xlsx"], "Unknown format 'xlsx'"),
        (["{campaign}", "contrast", "--include-gold"], "only be added to the judgments export"),
    ],
)
def test_bad_input_is_one_clear_line(campaign, arguments, message):
    arguments = [argument.format(campaign=campaign.id) for argument in arguments]
    with pytest.raises(CommandError, match=message):
        call_command("export", *arguments)


def test_an_unwritable_output_is_one_clear_line(campaign, tmp_path):
    with pytest.raises(CommandError, match=r"Cannot write .*missing/out\.jsonl"):
        call_command(
            "export", str(campaign.id), "contrast", output=str(tmp_path / "missing/out.jsonl")
        )
