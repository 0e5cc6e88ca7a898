"""Reading an uploaded CSV, TSV or JSONL file into rows of named cells, with where each came from.

Only the file's shape is checked here: its size, encoding, CSV or JSON syntax and
header. What the cells mean (which columns are required, which labels exist) is for
the importer, which reports its problems together with the ones found here.

Encodings: UTF-8, with or without the byte order mark Excel writes, and UTF-16 when
it starts with its byte order mark (Excel's "Unicode text"). Anything else, e.g. a
Latin-1 file, is refused line by line, naming the byte and its offset in the file:
guessing a legacy encoding would store wrong characters without a word.
"""

import codecs
import csv
import io
import json
from collections.abc import Callable
from dataclasses import dataclass, field

from cfannotate.core.exceptions import InvalidInput

FORMATS = {".csv": "csv", ".tsv": "tsv", ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "jsonl"}
FORMAT_NAMES = {"csv": "CSV", "tsv": "TSV (tab-separated)", "jsonl": "JSONL"}

# Magic numbers of files that are sometimes uploaded instead of their CSV export.
_BINARY_KINDS = {
    b"PK\x03\x04": "an Excel workbook or another zip archive",
    b"\xd0\xcf\x11\xe0": "an old Excel (.xls) workbook",
    b"%PDF": "a PDF document",
    b"\x1f\x8b": "a gzip archive",
}


@dataclass(frozen=True)
class TableRow:
    where: str  # "row 3" (CSV: the header is row 1, as a spreadsheet counts) or "line 3"
    values: dict  # column -> cell: text for CSV, any JSON value for JSONL


@dataclass
class Table:
    format: str  # csv | tsv | jsonl
    encoding: str  # utf-8 | utf-8-sig | utf-16
    columns: list[str] = field(default_factory=list)  # header order; JSONL: keys as first seen
    rows: list[TableRow] = field(default_factory=list)
    errors: dict[str, list[str]] = field(default_factory=dict)  # where -> what is wrong

    @property
    def format_name(self) -> str:
        return FORMAT_NAMES[self.format]


def too_large(size: int, limit: int) -> InvalidInput:
    return InvalidInput(
        f"The file has {size:,} bytes; the limit is {limit:,}. Nothing was imported.",
        fields={"file": ["Too large; split it into several files."]},
    )


def upload_bytes(upload, *, max_bytes: int) -> bytes:
    """The content of an uploaded file (Django's UploadedFile), refused unread if too large."""
    if upload.size is not None and upload.size > max_bytes:
        raise too_large(upload.size, max_bytes)
    content = upload.read(max_bytes + 1)
    if len(content) > max_bytes:
        raise too_large(upload.size or len(content), max_bytes)
    return content


def table_format(file_name: str, content: bytes) -> str:
    """csv, tsv or jsonl: by the file's extension, else by its first character."""
    lowered = file_name.lower()
    for extension, kind in FORMATS.items():
        if lowered.endswith(extension):
            return kind
    return "jsonl" if content.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"{") else "csv"


def table_read(
    *,
    file_name: str,
    content: bytes,
    max_bytes: int,
    max_rows: int,
    check_header: Callable[[list[str]], None] | None = None,
) -> Table:
    """The rows of a CSV/TSV file (with a header) or a JSONL file (one object per line).

    A problem of the whole file (too large, not text, no rows, a header naming a
    column twice, too many rows) raises InvalidInput; a problem of single rows or
    lines is returned in `errors`, keyed like the rows' `where`. `check_header`
    sees a CSV header before anything else is said about the file, to refuse it.
    """
    if len(content) > max_bytes:
        raise too_large(len(content), max_bytes)
    _refuse_binary(content)
    kind = table_format(file_name, content)
    encoding, lines, undecodable = _decode_lines(content)
    if kind == "jsonl":
        table = _read_jsonl(lines, encoding)
        table.errors = undecodable | table.errors
    elif undecodable:
        # A CSV row may span lines, so rows cannot be told apart around a bad byte.
        table = Table(format=kind, encoding=encoding, errors=undecodable)
    else:
        table = _read_csv("\n".join(lines), kind=kind, encoding=encoding)
        if check_header is not None and table.columns:
            check_header(table.columns)
    if not table.rows and not table.errors:
        header_only = kind != "jsonl" and table.columns
        raise InvalidInput(
            ("The file has a header but no rows" if header_only else "The file has no rows")
            + "; nothing was imported.",
            fields={"file": ["Header only." if header_only else "Empty."]},
        )
    if len(table.rows) > max_rows:
        raise InvalidInput(
            f"The file has {len(table.rows):,} rows; the limit is {max_rows:,} per file.",
            fields={"file": ["Too many rows; split it into several files."]},
        )
    return table


def _refuse_binary(content: bytes) -> None:
    for magic, kind in _BINARY_KINDS.items():
        if content.startswith(magic):
            raise InvalidInput(
                f"The file is {kind}, not text; save it as CSV (UTF-8) or JSONL and upload that.",
                fields={"file": ["Not a text file."]},
            )
    if content.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return
    nul = content.find(b"\x00")
    if nul >= 0:
        line = content.count(b"\n", 0, nul) + 1
        raise InvalidInput(
            f"The file has a NUL byte at byte offset {nul:,} (line {line}): it is UTF-16 "
            "without a byte order mark or not a text file. Save it as CSV UTF-8.",
            fields={"file": ["Not UTF-8 text."]},
        )


def _decode_lines(content: bytes) -> tuple[str, list[str], dict[str, list[str]]]:
    """The encoding, the file's lines as text, and every line that is not UTF-8."""
    if content.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            text = content.decode("utf-16")
        except UnicodeDecodeError as error:
            raise InvalidInput(
                f"The file starts as UTF-16 but breaks at byte offset {error.start:,}: "
                f"{error.reason}. Save it again as CSV UTF-8.",
                fields={"file": ["Not valid UTF-16."]},
            ) from None
        if "\x00" in text:
            raise InvalidInput(
                "The file has a NUL character; it is not a text file.",
                fields={"file": ["Not a text file."]},
            )
        return "utf-16", [line.removesuffix("\r") for line in text.split("\n")], {}
    encoding = "utf-8-sig" if content.startswith(codecs.BOM_UTF8) else "utf-8"
    offset = len(codecs.BOM_UTF8) if encoding == "utf-8-sig" else 0
    lines, errors = [], {}
    for number, raw in enumerate(content[offset:].split(b"\n"), start=1):
        try:
            lines.append(raw.decode("utf-8").removesuffix("\r"))
        except UnicodeDecodeError as error:
            byte = raw[error.start : error.start + 1].hex()
            errors[f"line {number}"] = [
                f"Not UTF-8 text (byte 0x{byte} at byte offset {offset + error.start:,} of "
                f"the file, character {error.start + 1} of the line); save the file as UTF-8."
            ]
            lines.append("")
        offset += len(raw) + 1
    return encoding, lines, errors


def _has_nul(value: object) -> bool:
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(_has_nul(key) or _has_nul(item) for key, item in value.items())
    if isinstance(value, list):
        return any(_has_nul(item) for item in value)
    return False


def _read_jsonl(lines: list[str], encoding: str) -> Table:
    table = Table(format="jsonl", encoding=encoding)
    columns: dict[str, None] = {}
    for number, line in enumerate(lines, start=1):
        where = f"line {number}"
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            table.errors[where] = [f"Not valid JSON: {error.msg} (character {error.colno})."]
            continue
        if not isinstance(record, dict):
            table.errors[where] = ["Each line must be a JSON object, {...}."]
            continue
        if _has_nul(record):
            # PostgreSQL cannot store the character; nobody means it.
            table.errors[where] = ["Contains a NUL character (\\u0000); remove it."]
            continue
        columns.update(dict.fromkeys(record))
        table.rows.append(TableRow(where, record))
    table.columns = list(columns)
    return table


def _header(cells: list[str]) -> list[str]:
    """Column names; a blank one is named by its position, a repeated one refused."""
    columns = [cell.strip() or f"column {position}" for position, cell in enumerate(cells, 1)]
    first_at: dict[str, int] = {}
    for position, name in enumerate(columns, start=1):
        if name in first_at:
            raise InvalidInput(
                f"The header names the column {name!r} twice (columns {first_at[name]} and "
                f"{position}); rename one of them.",
                fields={"columns": [f"{name!r} appears twice."]},
            )
        first_at[name] = position
    return columns


def _read_csv(text: str, *, kind: str, encoding: str) -> Table:
    table = Table(format=kind, encoding=encoding)
    delimiter = "\t" if kind == "tsv" else ","
    separator = "tab" if kind == "tsv" else "comma"
    # strict: a stray quote is an error to report, not a cell that swallows the file.
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    row = 0
    try:
        for cells in reader:
            row += 1
            if any(cell.strip() for cell in cells):
                table.columns = _header(cells)
                break
        for cells in reader:
            row += 1
            where = f"row {row}"
            if not any(cell.strip() for cell in cells):
                continue
            if len(cells) != len(table.columns):
                hint = (
                    f"quote cells that hold a {separator}"
                    if len(cells) > len(table.columns)
                    else "every row needs a cell for each column, even an empty one"
                )
                table.errors[where] = [
                    f"{len(cells)} cells but {len(table.columns)} columns; {hint}."
                ]
                continue
            table.rows.append(TableRow(where, dict(zip(table.columns, cells, strict=True))))
    except csv.Error as error:
        # The reader cannot find the next row after this; the rows before it stand.
        table.errors[f"row {row + 1}"] = [
            f'Not valid CSV: {error} (line {reader.line_num}); quote cells with "...".'
        ]
    return table
