"""`manage.py export`: to a file or standard output; one clear line on bad input."""

import errno
import json
import os
import stat
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


def _failing_midway(monkeypatch):
    """The export's text stops after a first piece, as on a disk that is full."""

    def chunks(self, rows=None):
        yield "a first row, written\n"
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr("cfannotate.exports.files.ExportFile.chunks", chunks)


def test_a_failed_write_leaves_the_old_file_whole_and_nothing_else(labeled, tmp_path, monkeypatch):
    path = tmp_path / "judgments.jsonl"
    path.write_text("the export of yesterday\n", encoding="utf-8")
    _failing_midway(monkeypatch)

    with pytest.raises(CommandError) as caught:
        call_command("export", str(labeled.campaign.id), "judgments", output=str(path))

    assert str(caught.value) == f"Cannot write {path}: No space left on device."
    assert path.read_text(encoding="utf-8") == "the export of yesterday\n"
    assert [each.name for each in tmp_path.iterdir()] == ["judgments.jsonl"]
    # A new file is not begun either.
    with pytest.raises(CommandError, match="No space left on device"):
        call_command("export", str(labeled.campaign.id), "judgments", output=str(tmp_path / "new"))
    assert [each.name for each in tmp_path.iterdir()] == ["judgments.jsonl"]


def test_a_written_file_replaces_the_old_one_and_keeps_its_permissions(labeled, tmp_path):
    path = tmp_path / "contrast.jsonl"
    path.write_text("old\n", encoding="utf-8")
    path.chmod(0o640)

    call_command(
        "export", str(labeled.campaign.id), "contrast", output=str(path), stderr=StringIO()
    )

    assert len(path.read_text(encoding="utf-8").splitlines()) == 2
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert [each.name for each in tmp_path.iterdir()] == ["contrast.jsonl"]


def test_a_full_standard_output_is_one_clear_line(labeled):
    class Full(StringIO):
        def write(self, text):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    with pytest.raises(CommandError) as caught:
        call_command("export", str(labeled.campaign.id), "judgments", stdout=Full())
    assert str(caught.value) == "Cannot write to standard output: No space left on device."
