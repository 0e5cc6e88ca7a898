"""JSONL and CSV encoding: one object per line, neutralized spreadsheet formulas."""

import csv
import io
import json
import math

import pytest

from cfannotate.exports import formats
from cfannotate.exports.formats import csv_cell, csv_chunks, jsonl_chunks

COLUMNS = ("id", "text", "score", "ok")


@pytest.mark.parametrize(
    "dangerous",
    ["=1+1", "+1+1", "-1+1", "@SUM(A1)", "\tcmd", "\r=1"],
    ids=["equals", "plus", "minus", "at", "tab", "carriage-return"],
)
def test_a_cell_a_spreadsheet_would_run_gets_a_leading_apostrophe(dangerous):
    assert csv_cell(dangerous) == "'" + dangerous


def test_other_cells_are_left_alone():
    assert csv_cell("A fine sentence = good.") == "A fine sentence = good."
    assert csv_cell("") == ""
    assert csv_cell(None) == ""
    assert (csv_cell(True), csv_cell(False)) == ("true", "false")
    assert (csv_cell(3), csv_cell(0.5), csv_cell(-2)) == ("3", "0.5", "-2")


def test_a_mapping_cell_is_json_as_in_the_jsonl_export():
    # label_votes: sorted keys, so one campaign's rows read alike; never Python's repr.
    assert csv_cell({"positive": 2, "negative": 0}) == '{"negative": 0, "positive": 2}'
    assert csv_cell({"neutralité": 1}) == '{"neutralité": 1}'


def test_csv_has_a_header_and_reads_back_with_quotes_and_newlines():
    rows = [{"id": 1, "text": 'He said "no",\nthen left.', "score": None, "ok": True}]

    text = "".join(csv_chunks(iter(rows), COLUMNS))

    assert list(csv.reader(io.StringIO(text, newline=""))) == [
        list(COLUMNS),
        ["1", 'He said "no",\nthen left.', "", "true"],
    ]


def test_jsonl_is_one_object_per_line_with_the_columns_in_order():
    rows = [{"ok": False, "text": "naïve =x", "id": 2, "score": 0.25, "ignored": 1}]

    lines = "".join(jsonl_chunks(iter(rows), COLUMNS)).splitlines()

    assert lines == ['{"id": 2, "text": "naïve =x", "score": 0.25, "ok": false}']


def test_jsonl_refuses_nan_rather_than_write_what_json_readers_reject():
    with pytest.raises(ValueError):
        list(jsonl_chunks(iter([{"id": 1, "text": "", "score": math.nan, "ok": True}]), COLUMNS))


def test_lines_are_sent_in_batches(monkeypatch):
    monkeypatch.setattr(formats, "LINES_PER_CHUNK", 4)
    rows = ({"id": n, "text": "t", "score": 1.0, "ok": True} for n in range(10))

    chunks = list(jsonl_chunks(rows, COLUMNS))

    assert [chunk.count("\n") for chunk in chunks] == [4, 4, 2]
    assert [json.loads(line)["id"] for line in "".join(chunks).splitlines()] == list(range(10))
