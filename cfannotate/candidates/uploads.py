"""Reading a researcher's file of candidate counterfactuals (CSV or JSONL) into rows.

Only the file's shape is checked here: encoding, CSV or JSON syntax, the columns.
What the rows say (which original, which label, duplicates) is checked by
`candidates_import`, which reports the problems of both kinds together.
"""

from dataclasses import dataclass, field

from cfannotate.core import tabular

MAX_UPLOAD_BYTES = 20 * 1024 * 1024
# Checked in the request (about 1 s for 10k rows); annotated in the background, about
# 40 ms a movie review on one core, so 10k take minutes (`candidates.imports`).
MAX_UPLOAD_ROWS = 10_000

# Each column and the other headers accepted for it.
COLUMNS = {
    "original_id": ("original_id", "original"),
    "text": ("text", "counterfactual"),
    "intended_label": ("intended_label", "label"),
}
REQUIRED_COLUMNS = ("original_id", "text")
COLUMN_NAMES = tabular.ColumnNames(COLUMNS, REQUIRED_COLUMNS)
upload_format = tabular.table_format


@dataclass(frozen=True)
class UploadedRow:
    where: str  # "row 3" (CSV, the header is row 1, as a spreadsheet counts) or "line 3"
    values: dict  # column -> value, under the canonical names of COLUMNS; others as given


@dataclass
class ParsedUpload:
    rows: list[UploadedRow] = field(default_factory=list)
    errors: dict[str, list[str]] = field(default_factory=dict)  # where -> what is wrong


def uploaded_bytes(upload) -> bytes:
    """The content of an uploaded file (Django's UploadedFile), refused unread if too large."""
    return tabular.upload_bytes(upload, max_bytes=MAX_UPLOAD_BYTES)


def read_candidate_upload(*, file_name: str, content: bytes) -> ParsedUpload:
    """Rows of an uploaded CSV/TSV (with a header) or JSONL file (one object per line).

    A problem with the whole file (too large, no rows, a required column missing)
    raises InvalidInput; a problem of single lines is returned in `errors`.
    """
    table = tabular.table_read(
        file_name=file_name,
        content=content,
        max_bytes=MAX_UPLOAD_BYTES,
        max_rows=MAX_UPLOAD_ROWS,
        check_header=COLUMN_NAMES.check_header,
    )
    rows, errors = COLUMN_NAMES.canonical_rows(table.rows)
    return ParsedUpload(
        rows=[UploadedRow(row.where, row.values) for row in rows], errors=table.errors | errors
    )
