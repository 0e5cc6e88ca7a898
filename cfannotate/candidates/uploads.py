"""Reading a researcher's file of candidate counterfactuals (CSV or JSONL) into rows.

Only the file's shape is checked here: encoding, CSV or JSON syntax, the columns.
What the rows say (which original, which label, duplicates) is checked by
`candidates_import`, which reports the problems of both kinds together.
"""

import csv
import io
import json
from dataclasses import dataclass, field

from cfannotate.core.exceptions import InvalidInput

MAX_UPLOAD_BYTES = 20 * 1024 * 1024
MAX_UPLOAD_ROWS = 10_000  # imports run inside the request: parsing 10k rows takes ~20 s

# Each column and the other headers accepted for it.
COLUMNS = {
    "original_id": ("original_id", "original"),
    "text": ("text", "counterfactual"),
    "intended_label": ("intended_label", "label"),
}
REQUIRED_COLUMNS = ("original_id", "text")
FORMATS = {".csv": "csv", ".tsv": "tsv", ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "jsonl"}


@dataclass(frozen=True)
class UploadedRow:
    where: str  # "row 3" (CSV, the header is row 1, as a spreadsheet counts) or "line 3"
    values: dict  # column -> value, under the canonical names of COLUMNS; others as given


@dataclass
class ParsedUpload:
    rows: list[UploadedRow] = field(default_factory=list)
    errors: dict[str, list[str]] = field(default_factory=dict)  # where -> what is wrong


def _too_large(size: int) -> InvalidInput:
    return InvalidInput(
        f"The file has {size:,} bytes; the limit is {MAX_UPLOAD_BYTES:,}.",
        fields={"file": ["Too large; split it into several files."]},
    )


def uploaded_bytes(upload) -> bytes:
    """The content of an uploaded file (Django's UploadedFile), refused unread if too large."""
    if upload.size is not None and upload.size > MAX_UPLOAD_BYTES:
        raise _too_large(upload.size)
    return upload.read()


def upload_format(file_name: str, content: bytes) -> str:
    """csv, tsv or jsonl: by the file's extension, else by its first character."""
    lowered = file_name.lower()
    for extension, kind in FORMATS.items():
        if lowered.endswith(extension):
            return kind
    return "jsonl" if content.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"{") else "csv"


def read_candidate_upload(*, file_name: str, content: bytes) -> ParsedUpload:
    """Rows of an uploaded CSV/TSV (with a header) or JSONL file (one object per line).

    A problem with the whole file (too large, no rows, a required column missing)
    raises InvalidInput; a problem of single lines is returned in `errors`.
    """
    if len(content) > MAX_UPLOAD_BYTES:
        raise _too_large(len(content))
    kind = upload_format(file_name, content)
    lines, undecodable = _decode_lines(content)
    if kind == "jsonl":
        parsed = _read_jsonl(lines)
        parsed.errors = undecodable | parsed.errors
    elif undecodable:
        # A CSV row may span lines, so rows cannot be told apart around a bad byte.
        parsed = ParsedUpload(errors=undecodable)
    else:
        parsed = _read_csv("\n".join(lines), delimiter="\t" if kind == "tsv" else ",")
    if not parsed.rows and not parsed.errors:
        raise InvalidInput(
            "The file has no rows; nothing was imported.", fields={"file": ["Empty."]}
        )
    if len(parsed.rows) > MAX_UPLOAD_ROWS:
        raise InvalidInput(
            f"The file has {len(parsed.rows):,} rows; the limit is {MAX_UPLOAD_ROWS:,} per file.",
            fields={"file": ["Too many rows; split it into several files."]},
        )
    return parsed


def _decode_lines(content: bytes) -> tuple[list[str], dict[str, list[str]]]:
    """The file's lines as text, and every line that is not UTF-8, with where it breaks."""
    content = content.removeprefix(b"\xef\xbb\xbf")  # the byte order mark Excel writes
    lines, errors = [], {}
    for number, raw in enumerate(content.split(b"\n"), start=1):
        try:
            lines.append(raw.decode("utf-8").removesuffix("\r"))
        except UnicodeDecodeError as error:
            byte = raw[error.start : error.start + 1].hex()
            errors[f"line {number}"] = [
                f"Not UTF-8 text (byte 0x{byte} at character {error.start + 1}); "
                "save the file as UTF-8."
            ]
            lines.append("")
    return lines, errors


_ALIASES = {alias: name for name, spellings in COLUMNS.items() for alias in spellings}


def _column_name(key: object) -> str:
    return _ALIASES.get(str(key).strip().lower(), str(key))


def _canonical(pairs) -> dict:
    """(key, value) pairs under the names of COLUMNS; of two spellings, the first wins."""
    result: dict = {}
    for key, value in pairs:
        result.setdefault(_column_name(key), value)
    return result


def _read_jsonl(lines: list[str]) -> ParsedUpload:
    parsed = ParsedUpload()
    for number, line in enumerate(lines, start=1):
        where = f"line {number}"
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            parsed.errors[where] = [f"Not valid JSON: {error.msg} (character {error.colno})."]
            continue
        if not isinstance(record, dict):
            parsed.errors[where] = ["Each line must be a JSON object with original_id and text."]
            continue
        parsed.rows.append(UploadedRow(where, _canonical(record.items())))
    return parsed


def _read_csv(text: str, *, delimiter: str) -> ParsedUpload:
    parsed = ParsedUpload()
    # strict: a stray quote is an error to report, not a cell that swallows the file.
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    row = 1  # the header
    try:
        header = next(reader, None)
        if header is None:
            return parsed
        columns = [_column_name(cell) for cell in header]
        missing = [name for name in REQUIRED_COLUMNS if name not in columns]
        if missing:
            raise InvalidInput(
                f"The file has no {' or '.join(missing)} column; its header must name "
                f"original_id and text, and may name intended_label (found: "
                f"{', '.join(repr(cell) for cell in header) or 'nothing'}).",
                fields={"columns": [f"Missing: {', '.join(missing)}."]},
            )
        for cells in reader:
            row += 1
            where = f"row {row}"
            if not any(cell.strip() for cell in cells):
                continue
            if len(cells) > len(columns):
                separator = "tab" if delimiter == "\t" else "comma"
                parsed.errors[where] = [
                    f"{len(cells)} cells but {len(columns)} columns; "
                    f"quote cells that hold a {separator}."
                ]
                continue
            parsed.rows.append(UploadedRow(where, _canonical(zip(columns, cells, strict=False))))
    except csv.Error as error:
        # The reader cannot find the next row after this; the rows before it stand.
        parsed.errors[f"row {row + 1}"] = [
            f'Not valid CSV: {error} (line {reader.line_num}); quote cells with "...".'
        ]
    return parsed
