"""Reading uploaded candidate files: CSV, TSV and JSONL, their encoding and their columns."""

import pytest

from cfannotate.candidates import uploads
from cfannotate.candidates.uploads import read_candidate_upload, upload_format
from cfannotate.core.exceptions import InvalidInput


def read(content: bytes | str, name: str = "candidates.csv"):
    if isinstance(content, str):
        content = content.encode("utf-8")
    return read_candidate_upload(file_name=name, content=content)


def test_csv_rows_are_numbered_as_a_spreadsheet_counts_them():
    parsed = read(
        "Original_ID,Counterfactual,label,note\n"
        's01,"It is not great, for kids.",negative,first\n'
        "\n"
        's02,"Two\nlines",,\n'
        "s03,Short.,positive,third\r\n"
    )
    assert parsed.errors == {}
    assert [row.where for row in parsed.rows] == ["row 2", "row 4", "row 5"]
    assert parsed.rows[0].values == {
        "original_id": "s01",
        "text": "It is not great, for kids.",
        "intended_label": "negative",
        "note": "first",
    }
    assert parsed.rows[1].values["text"] == "Two\nlines"


def test_tsv_and_a_byte_order_mark():
    parsed = read(b"\xef\xbb\xbforiginal_id\ttext\ns01\tIt is not great.\n", "cands.tsv")
    assert parsed.rows[0].values == {"original_id": "s01", "text": "It is not great."}


def test_jsonl_lines_and_their_problems_together():
    parsed = read(
        '{"original_id": "s01", "text": "Not great."}\n'
        "\n"
        "{not json}\n"
        '["a list"]\n'
        '{"original": 7, "counterfactual": "Fine.", "label": "positive"}\n',
        "c.jsonl",
    )
    assert [row.where for row in parsed.rows] == ["line 1", "line 5"]
    assert parsed.rows[1].values == {
        "original_id": 7,
        "text": "Fine.",
        "intended_label": "positive",
    }
    assert "Not valid JSON" in parsed.errors["line 3"][0]
    assert "JSON object" in parsed.errors["line 4"][0]


def test_a_file_that_is_not_utf8_is_refused_whole_naming_its_bad_lines():
    latin1 = "original_id,text\ns01,Très bien.\ns02,Fine.\ns03,Déjà vu.\n".encode("latin-1")
    with pytest.raises(InvalidInput, match="line 2 has the byte 0xE8") as caught:
        read(latin1)
    assert "Save As → CSV UTF-8" in caught.value.message
    assert list(caught.value.fields) == ["file", "line 2", "line 4"]
    # JSONL too: a file has one encoding, so its good lines are not kept either.
    jsonl = b'{"original_id": "s01", "text": "caf\xe9"}\n{"original_id": "s02", "text": "ok"}\n'
    with pytest.raises(InvalidInput, match="line 1 has the byte 0xE9") as caught:
        read(jsonl, "c.jsonl")
    assert "encoding='utf-8'" in caught.value.message


@pytest.mark.parametrize(
    "header, missing",
    [
        ("id,sentence", "original_id or text"),
        ("original_id,label", "text"),
        ("", "original_id or text"),
    ],
)
def test_a_required_column_missing_fails_the_file(header, missing):
    with pytest.raises(InvalidInput, match=f"no {missing} column") as caught:
        read(f"{header}\ns01,x\n")
    assert "columns" in caught.value.fields


def test_a_header_naming_one_column_under_two_spellings_fails_the_file():
    with pytest.raises(InvalidInput) as caught:
        read("original_id,Original,text\ns01,s02,Not great.\n")
    twice = "'original_id' and 'Original' both name the original_id column; keep one of them."
    assert caught.value.message == f"The header names a column twice: {twice}"
    assert caught.value.fields == {"columns": [twice]}


def test_a_jsonl_line_naming_one_column_twice_is_its_error():
    parsed = read(
        '{"original_id": "s01", "text": "Not great."}\n'
        '{"original_id": "s01", "text": "Fine.", "counterfactual": "Bad."}\n',
        "c.jsonl",
    )
    assert [row.where for row in parsed.rows] == ["line 1"]
    assert parsed.errors == {
        "line 2": ["'text' and 'counterfactual' both name the text column; keep one of them."]
    }


def test_a_row_with_more_cells_than_columns_is_an_error():
    parsed = read("original_id,text\ns01,It is bad, really\ns02,Fine.\n")
    assert "3 cells but 2 columns" in parsed.errors["row 2"][0]
    assert [row.where for row in parsed.rows] == ["row 3"]


def test_broken_csv_is_reported_with_its_row():
    parsed = read('original_id,text\ns01,"fine"\ns02,"unterminated\n')
    assert [row.values["text"] for row in parsed.rows] == ["fine"]
    assert "Not valid CSV: unexpected end of data" in parsed.errors["row 3"][0]
    parsed = read('original_id,text\ns01,"quoted" then more\ns02,Fine.\n')
    assert parsed.rows == [] and "Not valid CSV" in parsed.errors["row 2"][0]


@pytest.mark.parametrize("content", ["", "original_id,text\n", "\n\n"])
def test_a_file_without_rows_is_refused(content):
    with pytest.raises(InvalidInput, match="no rows"):
        read(content, "c.jsonl" if not content.startswith("o") else "c.csv")


def test_size_and_row_limits(monkeypatch):
    monkeypatch.setattr(uploads, "MAX_UPLOAD_BYTES", 50)
    with pytest.raises(InvalidInput, match="the limit is 50"):
        read("original_id,text\n" + "s01,x\n" * 20)
    monkeypatch.setattr(uploads, "MAX_UPLOAD_BYTES", 10_000)
    monkeypatch.setattr(uploads, "MAX_UPLOAD_ROWS", 3)
    with pytest.raises(InvalidInput, match="more than 3 rows; the limit is 3"):
        read("original_id,text\n" + "s01,x\n" * 4)


def test_format_by_extension_else_by_content():
    assert upload_format("a.CSV", b"{") == "csv"
    assert upload_format("a.ndjson", b"x") == "jsonl"
    assert upload_format("upload", b'\n {"a": 1}') == "jsonl"
    assert upload_format("upload", b"original_id,text") == "csv"
