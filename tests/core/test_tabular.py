"""Reading uploaded tables: the encoding check, the width cap and the bounds on the work."""

import codecs

import pytest

from cfannotate.core import tabular
from cfannotate.core.exceptions import InvalidInput


def read(content: bytes | str, name: str = "data.csv", max_rows: int = 100):
    if isinstance(content, str):
        content = content.encode("utf-8")
    return tabular.table_read(
        file_name=name, content=content, max_bytes=1_000_000, max_rows=max_rows
    )


def test_the_encoding_is_checked_in_chunks_without_splitting_a_character(monkeypatch):
    monkeypatch.setattr(tabular, "_CHUNK_BYTES", 3)
    table = read("text\nDéjà vu 🎬 très\n")
    assert table.rows[0].values == {"text": "Déjà vu 🎬 très"}
    content = "text\nDéjà vu\n".encode() + b"caf\xe9\n"
    with pytest.raises(InvalidInput) as caught:
        read(content)
    assert list(caught.value.fields) == ["file", "line 3"]
    assert "(byte offset 18 of the file)" in caught.value.fields["line 3"][0]


def test_a_file_cut_in_the_middle_of_a_character_is_not_utf8():
    with pytest.raises(InvalidInput, match="line 2 has the byte 0xC3") as caught:
        read(b"text\nabc\xc3")
    [place] = caught.value.fields["line 2"]
    assert "at character 4 of the line (byte offset 8 of the file)" in place


def test_only_the_first_bad_lines_are_named():
    with pytest.raises(InvalidInput) as caught:
        read(b"text\n" + b"caf\xe9\n" * 20)
    named = [where for where in caught.value.fields if where != "file"]
    assert named == ["line 2", "line 3", "line 4", "line 5", "line 6"]


def test_a_byte_order_mark_is_not_counted_as_a_character():
    with pytest.raises(InvalidInput) as caught:
        read(codecs.BOM_UTF8 + b"caf\xe9\nx\n")
    [place] = caught.value.fields["line 1"]
    assert "at character 4 of the line (byte offset 6 of the file)" in place


@pytest.mark.parametrize("line_end", ["\n", "\r\n", "\r"])
def test_windows_unix_and_old_mac_line_ends(line_end):
    content = line_end.join(["text,label", '"Two' + line_end + 'lines",pos', "One,neg", ""])
    table = read(content)
    assert [row.values["text"] for row in table.rows] == ["Two\nlines", "One"]
    assert [row.where for row in table.rows] == ["row 2", "row 3"]


def test_quoted_names_holding_the_separator_are_counted_as_the_reader_sees_them():
    header = ",".join(f'"name, {number}"' for number in range(150))
    table = read(f"\n\n{header}\n{',' * 149}x\n")
    assert len(table.columns) == 150 and table.columns[0] == "name, 0"
    with pytest.raises(InvalidInput, match="The file has 201 columns; the limit is 200"):
        read(",".join(f'"n, {number}"' for number in range(201)) + "\nx\n")


def test_the_width_of_tab_separated_and_utf16_files_is_capped_too():
    header = "\t".join(f"c{number}" for number in range(250))
    with pytest.raises(InvalidInput, match="250 columns; the limit is 200"):
        read(header + "\nx\n", "data.tsv")
    content = codecs.BOM_UTF16_LE + f"{header}\nx\n".encode("utf-16-le")
    with pytest.raises(InvalidInput, match="250 columns; the limit is 200"):
        read(content, "data.tsv")


def test_reading_stops_at_the_row_limit_counting_bad_rows_too():
    with pytest.raises(InvalidInput, match="more than 2 rows; the limit is 2 per file"):
        read("a,b\n1,2\n1\n1,2,3\n", max_rows=2)
    assert len(read("a,b\n1,2\n\n\n1\n", max_rows=2).errors) == 1


def test_blank_lines_are_bounded(monkeypatch):
    monkeypatch.setattr(tabular, "MAX_BLANK_LINES", 3)
    assert len(read("a,b\n\n,\n \n1,2\n").rows) == 1
    with pytest.raises(InvalidInput, match="more than 3 blank lines"):
        read("a,b\n\n\n\n\n1,2\n")
    with pytest.raises(InvalidInput, match="more than 3 blank lines"):
        read('{"a": 1}\n\n\n\n\n', "data.jsonl")


def test_a_jsonl_record_too_long_is_refused_unparsed(monkeypatch):
    monkeypatch.setattr(tabular, "MAX_LINE_CHARS", 40)
    table = read('{"text": "short"}\n{"text": "' + "x" * 40 + '"}\n', "data.jsonl")
    assert [row.where for row in table.rows] == ["line 1"]
    assert table.errors == {"line 2": ["52 characters; the limit is 40 for one record."]}
