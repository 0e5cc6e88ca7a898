"""Reading an uploaded CSV, TSV or JSONL file into rows of named cells, with where each came from.

Only the file's shape is checked here: its size, encoding, width, CSV or JSON syntax
and header. What the cells mean (which columns are required, which labels exist) is
for the importer, which reports its problems together with the ones found here.

Encodings: UTF-8, with or without the byte order mark Excel writes, and UTF-16 when
it starts with its byte order mark (Excel's "Unicode text"). Anything else, e.g. a
Latin-1 file, is refused as a whole, naming the first bad bytes and their lines and
saying how to save the file as UTF-8: guessing a legacy encoding would store wrong
characters without a word, and a file has one encoding, so no row of it is kept.

The work is bounded whatever the file holds: the encoding is checked in chunks, the
header's width is counted on its line alone before anything is parsed (a sheet with a
million columns is refused in milliseconds), and lines are decoded one at a time as
the reader asks for them, which stops at the row limit or MAX_BLANK_LINES blank lines.
"""

import codecs
import csv
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from cfannotate.core.exceptions import InvalidInput
from cfannotate.core.json_input import json_loads

FORMATS = {".csv": "csv", ".tsv": "tsv", ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "jsonl"}
FORMAT_NAMES = {"csv": "CSV", "tsv": "TSV (tab-separated)", "jsonl": "JSONL"}

# A dataset of sentences has a handful of columns; hundreds are a transposed sheet or a
# dump, and each column costs the preview work (mapping guesses, the sample table).
MAX_COLUMNS = 200
# A header this long is counted by its separators without parsing it.
MAX_HEADER_CHARS = 64 * 1024
# A JSONL record longer than this is refused unparsed: a sentence, its label and a few
# extras take kilobytes, and parsing a line of a million keys takes seconds.
MAX_LINE_CHARS = 1024 * 1024
# Blank lines are skipped, but each costs a step of the parser; past this many the file
# is refused rather than read for seconds.
MAX_BLANK_LINES = 10_000
# How many bad places of a file that is not UTF-8 are named; finding more costs a pass each.
ENCODING_PROBLEMS_NAMED = 5
_CHUNK_BYTES = 1024 * 1024  # the encoding is checked this much at a time

# How to save a file as UTF-8, by the format it was read as.
_SAVE_AS_UTF8 = {
    "csv": "save the file as UTF-8 (in Excel: Save As → CSV UTF-8 (Comma delimited))",
    "tsv": "save the file as UTF-8 (in Excel: Save As → Unicode Text, or CSV UTF-8)",
    "jsonl": "save the file as UTF-8 (e.g. Python's open(path, 'w', encoding='utf-8'))",
}

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


@dataclass(frozen=True)
class ColumnNames:
    """A file's columns under our names: each name and the headers accepted for it (any case),
    e.g. `{"original_id": ("original_id", "original")}`; `required` must all be there."""

    spellings: dict[str, tuple[str, ...]]
    required: tuple[str, ...]

    def name_of(self, header: object) -> str:
        """Our name for a header; an unknown header keeps its own."""
        spelled = str(header).strip().lower()
        for name, spellings in self.spellings.items():
            if spelled in spellings:
                return name
        return str(header)

    def canonical(self, values: dict) -> dict:
        """A row's values under our names (rows naming a column twice are refused before:
        `check_header`, `canonical_rows`)."""
        return {self.name_of(key): value for key, value in values.items()}

    def canonical_rows(self, rows: list[TableRow]) -> tuple[list[TableRow], dict[str, list[str]]]:
        """The rows under our names, and the errors of those whose keys name one column
        twice (JSONL objects: a CSV header that does is refused by `check_header`)."""
        kept, errors = [], {}
        for row in rows:
            twice = self.named_twice(list(row.values))
            if twice:
                errors[row.where] = [twice]
            else:
                kept.append(TableRow(row.where, self.canonical(row.values)))
        return kept, errors

    def named_twice(self, headers: list) -> str | None:
        """Why `headers` name one of our columns twice under two spellings, or None."""
        first: dict[str, object] = {}
        for header in headers:
            name = self.name_of(header)
            if name not in self.spellings:
                continue
            if name in first:
                return (
                    f"{str(first[name])!r} and {str(header)!r} both name the {name} column; "
                    "keep one of them."
                )
            first[name] = header
        return None

    def check_header(self, header: list[str]) -> None:
        """InvalidInput naming the required columns the header lacks, or a column it names
        twice (for `table_read`)."""
        twice = self.named_twice(header)
        if twice:
            raise InvalidInput(
                f"The header names a column twice: {twice}", fields={"columns": [twice]}
            )
        found = {self.name_of(name) for name in header}
        missing = [name for name in self.required if name not in found]
        if not missing:
            return
        optional = [name for name in self.spellings if name not in self.required]
        may = f", and may name {' or '.join(optional)}" if optional else ""
        raise InvalidInput(
            f"The file has no {' or '.join(missing)} column; its header must name "
            f"{' and '.join(self.required)}{may} (found: "
            f"{', '.join(repr(name) for name in header) or 'nothing'}).",
            fields={"columns": [f"Missing: {', '.join(missing)}."]},
        )


def jsonl_objects(*, file_name: str, content: bytes, max_bytes: int, max_rows: int) -> list[dict]:
    """The objects of a JSONL file, all or none: InvalidInput naming each line that is not one
    (a dataset on disk, a predictions or training file; uploads with columns use `table_read`)."""
    table = table_read(
        file_name=file_name, content=content, max_bytes=max_bytes, max_rows=max_rows, kind="jsonl"
    )
    if table.errors:
        first, problems = next(iter(table.errors.items()))
        lines = len(table.errors)
        more = f" ({lines - 1} more line{'s' if lines > 2 else ''} below)" if lines > 1 else ""
        raise InvalidInput(f"{file_name}: {first}: {' '.join(problems)}{more}", fields=table.errors)
    return [row.values for row in table.rows]


def table_read(
    *,
    file_name: str,
    content: bytes,
    max_bytes: int,
    max_rows: int,
    max_columns: int = MAX_COLUMNS,
    kind: str | None = None,
    check_header: Callable[[list[str]], None] | None = None,
) -> Table:
    """The rows of a CSV/TSV file (with a header) or a JSONL file (one object per line).

    A problem of the whole file (too large, not text, not UTF-8, no rows, a header
    naming a column twice, too many rows or columns) raises InvalidInput; a problem of
    single rows or lines is returned in `errors`, keyed like the rows' `where`.
    `kind` fixes the format (else the name or the first character tells it);
    `check_header` sees a CSV header before its rows are read, to refuse it.
    """
    if len(content) > max_bytes:
        raise too_large(len(content), max_bytes)
    _refuse_binary(content)
    kind = kind or table_format(file_name, content)
    encoding, text = _text(content, kind=kind)
    if kind == "jsonl":
        lines = _lines(text, _LINE_END)
        table = _read_jsonl(lines, encoding, max_rows=max_rows, max_columns=max_columns)
    else:
        _refuse_wide_header(text, kind=kind, max_columns=max_columns)
        table = _read_csv(
            _lines(text, _ANY_LINE_END),
            kind=kind,
            encoding=encoding,
            max_rows=max_rows,
            max_columns=max_columns,
            check_header=check_header,
        )
    if not table.rows and not table.errors:
        header_only = kind != "jsonl" and table.columns
        raise InvalidInput(
            ("The file has a header but no rows" if header_only else "The file has no rows")
            + "; nothing was imported.",
            fields={"file": ["Header only." if header_only else "Empty."]},
        )
    return table


def _text(content: bytes, *, kind: str) -> tuple[str, bytes | str]:
    """The encoding and the text of a file: UTF-8 bytes checked (byte order mark cut off),
    or UTF-16 decoded when it starts with its byte order mark.

    Anything else raises InvalidInput naming the first bad bytes and how to save the
    file as UTF-8. UTF-8 stays bytes, decoded line by line as it is read: a whole
    decoded copy of a file with one emoji would take four bytes a character.
    """
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
        return "utf-16", text
    bom = content.startswith(codecs.BOM_UTF8)
    start = len(codecs.BOM_UTF8) if bom else 0
    bad = _first_bad_byte(content, start)
    if bad is not None:
        raise _not_utf8(content, first_bad=bad, kind=kind)
    return ("utf-8-sig", content[start:]) if bom else ("utf-8", content)


def _first_bad_byte(content: bytes, start: int) -> int | None:
    """The offset of the first byte from `start` on that is not UTF-8, or None."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    view = memoryview(content)
    for chunk in range(start, len(content), _CHUNK_BYTES):
        # A character cut by the chunk's end waits in the decoder's buffer.
        pending = len(decoder.getstate()[0])
        try:
            decoder.decode(view[chunk : chunk + _CHUNK_BYTES], final=False)
        except UnicodeDecodeError as error:
            return chunk - pending + error.start
    pending = len(decoder.getstate()[0])
    return len(content) - pending if pending else None


_LINE_END = {bytes: re.compile(rb"\n"), str: re.compile(r"\n")}
# CSV as spreadsheets save it: Windows, Unix and old Mac ("CSV (Macintosh)") line ends.
_ANY_LINE_END = {bytes: re.compile(rb"\r\n|\r|\n"), str: re.compile(r"\r\n|\r|\n")}


def _lines(text: bytes | str, line_end: dict[type, re.Pattern]) -> Iterator[str]:
    """The lines of a checked text, each as str ending in "\n", made only when asked for."""
    decode = (lambda line: line.decode("utf-8")) if isinstance(text, bytes) else str
    start = 0
    for found in line_end[type(text)].finditer(text):
        yield decode(text[start : found.start()]).removesuffix("\r") + "\n"
        start = found.end()
    if start < len(text):
        yield decode(text[start:])


def _not_utf8(content: bytes, *, first_bad: int, kind: str) -> InvalidInput:
    """The error for a file that is not UTF-8: its first bad bytes by line, and the fix."""
    places: dict[str, list[str]] = {}
    bad: int | None = first_bad
    while bad is not None and len(places) < ENCODING_PROBLEMS_NAMED:
        line = content.count(b"\n", 0, bad) + 1
        places[f"line {line}"] = [_bad_byte(content, bad)]
        bad = _next_bad_byte(content, after=bad)
    where = next(iter(places))
    byte = content[first_bad : first_bad + 1]
    legacy = _legacy_character(byte)
    fix = _SAVE_AS_UTF8.get(kind, _SAVE_AS_UTF8["csv"])
    message = f"The file is not UTF-8 text: {where} has the byte 0x{byte.hex().upper()}"
    if legacy:
        message += f" ({legacy!r} in Windows-1252 or Latin-1, which the file was likely saved in)"
    return InvalidInput(
        f"{message}. To fix it, {fix}, then upload it again. Nothing was imported.",
        fields={"file": [f"Not UTF-8 text; {fix}."], **places},
    )


def _next_bad_byte(content: bytes, *, after: int) -> int | None:
    """The offset of the next byte that is not UTF-8, from the line after `after` on."""
    line_end = content.find(b"\n", after)
    # A line end is never inside a UTF-8 sequence, so the next line decodes on its own.
    return None if line_end < 0 else _first_bad_byte(content, line_end + 1)


def _legacy_character(byte: bytes) -> str:
    character = byte.decode("cp1252", errors="replace")
    return "" if character == "\ufffd" else character


def _bad_byte(content: bytes, offset: int) -> str:
    """Where a bad byte is in its line, what it would be in Windows-1252, and its context."""
    line_start = content.rfind(b"\n", 0, offset) + 1
    if line_start == 0 and content.startswith(codecs.BOM_UTF8):
        line_start = len(codecs.BOM_UTF8)  # not a character of the line
    # The line decodes up to its first bad byte, so this counts characters, not bytes.
    character = len(content[line_start:offset].decode("utf-8", errors="replace")) + 1
    byte = content[offset : offset + 1]
    legacy = _legacy_character(byte)
    meaning = f" ({legacy!r} in Windows-1252)" if legacy else ""
    near = content[max(line_start, offset - 20) : offset + 20].split(b"\n")[0]
    snippet = near.decode("cp1252", errors="replace").replace("\r", "")
    return (
        f"Byte 0x{byte.hex().upper()}{meaning} at character {character} of the line "
        f"(byte offset {offset:,} of the file), in “{snippet}”."
    )


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


def too_many_columns(found: int, limit: int, *, what: str = "columns") -> InvalidInput:
    return InvalidInput(
        f"The file has {found:,} {what}; the limit is {limit:,}. Keep only the columns the "
        "campaign needs (the text, its label, an id and a few others) and upload it again; "
        "nothing was imported.",
        fields={"columns": [f"{found:,} {what}; at most {limit:,}."]},
    )


def too_many_rows(limit: int) -> InvalidInput:
    return InvalidInput(
        f"The file has more than {limit:,} rows; the limit is {limit:,} per file. "
        "Nothing was imported.",
        fields={"file": ["Too many rows; split it into several files."]},
    )


def too_many_blank_lines(limit: int) -> InvalidInput:
    return InvalidInput(
        f"The file has more than {limit:,} blank lines; remove them and upload it again. "
        "Nothing was imported.",
        fields={"file": ["Too many blank lines."]},
    )


# Where the header starts: the first character that is not blank nor a separator.
_NOT_BLANK = {
    (bytes, "csv"): re.compile(rb"[^\s,]"),
    (str, "csv"): re.compile(r"[^\s,]"),
    (bytes, "tsv"): re.compile(rb"\S"),
    (str, "tsv"): re.compile(r"\S"),
}


def _refuse_wide_header(text: bytes | str, *, kind: str, max_columns: int) -> None:
    """Refuse a header of more than `max_columns` columns, looking at its line alone.

    Counting the separators of one line runs at memory speed; parsing a million cells
    and guessing what each holds is what made a wide file take minutes. The reader
    checks the parsed header again (`_header`), so a quoted oddity here is no gap.
    """
    first = _NOT_BLANK[type(text), kind].search(text)
    if first is None:
        return  # no header at all: the reader says so
    binary = isinstance(text, bytes)
    newline, carriage_return = (b"\n", b"\r") if binary else ("\n", "\r")
    # The header's line, with the separators before its first cell (",,text").
    start = max(
        text.rfind(newline, 0, first.start()), text.rfind(carriage_return, 0, first.start())
    )
    start += 1
    found = _ANY_LINE_END[type(text)].search(text, first.start())
    end = found.start() if found else len(text)
    delimiter = "\t" if kind == "tsv" else ","
    separator, quote = (delimiter.encode(), b'"') if binary else (delimiter, '"')
    columns = text.count(separator, start, end) + 1
    quoted = text.find(quote, start, end) >= 0
    if columns > max_columns and quoted and end - start <= MAX_HEADER_CHARS:
        # Quoted names may hold the separator: count the cells the reader will see.
        line = text[start:end]
        line = line.decode("utf-8") if isinstance(line, bytes) else line
        columns = len(next(csv.reader([line], delimiter=delimiter), []))
    if columns > max_columns:
        raise too_many_columns(columns, max_columns)


def _has_nul(value: object) -> bool:
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(_has_nul(key) or _has_nul(item) for key, item in value.items())
    if isinstance(value, list):
        return any(_has_nul(item) for item in value)
    return False


def _read_jsonl(lines: Iterator[str], encoding: str, *, max_rows: int, max_columns: int) -> Table:
    table = Table(format="jsonl", encoding=encoding)
    columns: dict[str, None] = {}
    blank = 0
    for number, line in enumerate(lines, start=1):
        where = f"line {number}"
        if not line.strip():
            blank += 1
            if blank > MAX_BLANK_LINES:
                raise too_many_blank_lines(MAX_BLANK_LINES)
            continue
        if len(table.rows) + len(table.errors) >= max_rows:
            raise too_many_rows(max_rows)
        length = len(line) - line.endswith("\n")
        if length > MAX_LINE_CHARS:
            table.errors[where] = [
                f"{length:,} characters; the limit is {MAX_LINE_CHARS:,} for one record."
            ]
            continue
        try:
            record = json_loads(line)
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
        if len(columns) > max_columns:
            raise too_many_columns(len(columns), max_columns, what=f"keys by {where}")
        table.rows.append(TableRow(where, record))
    table.columns = list(columns)
    return table


def _header(cells: list[str], *, max_columns: int) -> list[str]:
    """Column names; a blank one is named by its position, a repeated one refused."""
    if len(cells) > max_columns:
        raise too_many_columns(len(cells), max_columns)
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


def _read_csv(
    lines: Iterator[str],
    *,
    kind: str,
    encoding: str,
    max_rows: int,
    max_columns: int,
    check_header: Callable[[list[str]], None] | None,
) -> Table:
    table = Table(format=kind, encoding=encoding)
    delimiter = "\t" if kind == "tsv" else ","
    separator = "tab" if kind == "tsv" else "comma"
    # strict: a stray quote is an error to report, not a cell that swallows the file.
    reader = csv.reader(lines, delimiter=delimiter, strict=True)
    row = blank = 0
    try:
        for cells in reader:
            row += 1
            if any(cell.strip() for cell in cells):
                table.columns = _header(cells, max_columns=max_columns)
                break
            blank += 1
            if blank > MAX_BLANK_LINES:
                raise too_many_blank_lines(MAX_BLANK_LINES)
        if check_header is not None and table.columns:
            check_header(table.columns)
        for cells in reader:
            row += 1
            where = f"row {row}"
            if not any(cell.strip() for cell in cells):
                blank += 1
                if blank > MAX_BLANK_LINES:
                    raise too_many_blank_lines(MAX_BLANK_LINES)
                continue
            if len(table.rows) + len(table.errors) >= max_rows:
                raise too_many_rows(max_rows)
            if len(cells) != len(table.columns):
                hint = (
                    f"quote cells that hold a {separator}"
                    if len(cells) > len(table.columns)
                    else "every row needs a cell for each column, even an empty one"
                )
                table.errors[where] = [
                    f"{len(cells):,} cells but {len(table.columns)} columns; {hint}."
                ]
                continue
            table.rows.append(TableRow(where, dict(zip(table.columns, cells, strict=True))))
    except csv.Error as error:
        # The reader cannot find the next row after this; the rows before it stand.
        table.errors[f"row {row + 1}"] = [
            f'Not valid CSV: {error} (line {reader.line_num}); quote cells with "...".'
        ]
    return table
