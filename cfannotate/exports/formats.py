"""Turns export rows into JSONL or CSV text, a batch of lines at a time.

JSONL: one object per line with the same keys in the same order, UTF-8, no NaN, so
`datasets.load_dataset("json", data_files=...)` reads it. CSV: a header row, then
one row per record; a text cell that a spreadsheet would run as a formula gets a
leading apostrophe (OWASP "CSV injection"), so CSV is for reading, JSONL for training.
"""

import csv
import json
from collections.abc import Iterable, Iterator
from typing import Any

FORMATS = {
    "jsonl": "application/jsonl; charset=utf-8",
    "csv": "text/csv; charset=utf-8",
}

# Lines joined into one chunk of the response: large enough to keep writes few,
# small enough to keep memory flat.
LINES_PER_CHUNK = 500

# What makes Excel, LibreOffice and Google Sheets read a cell as a formula.
FORMULA_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: Any) -> str:
    """One CSV cell: empty for None, true/false for booleans, neutralized text."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return "'" + value if value.startswith(FORMULA_TRIGGERS) else value
    if isinstance(value, dict):  # e.g. label_votes: JSON, as the JSONL export has it
        return csv_cell(json.dumps(value, ensure_ascii=False, sort_keys=True))
    return str(value)


class _Echo:
    """A file-like object whose write hands the text back, so csv.writer makes one line."""

    def write(self, text: str) -> str:
        return text


def _batched(lines: Iterable[str]) -> Iterator[str]:
    batch: list[str] = []
    for line in lines:
        batch.append(line)
        if len(batch) >= LINES_PER_CHUNK:
            yield "".join(batch)
            batch = []
    if batch:
        yield "".join(batch)


def jsonl_chunks(rows: Iterable[dict], columns: tuple[str, ...]) -> Iterator[str]:
    lines = (
        json.dumps({column: row[column] for column in columns}, ensure_ascii=False, allow_nan=False)
        + "\n"
        for row in rows
    )
    return _batched(lines)


def csv_chunks(rows: Iterable[dict], columns: tuple[str, ...]) -> Iterator[str]:
    writer = csv.writer(_Echo())

    def lines() -> Iterator[str]:
        yield writer.writerow(columns)
        for row in rows:
            yield writer.writerow([csv_cell(row[column]) for column in columns])

    return _batched(lines())


ENCODERS = {"jsonl": jsonl_chunks, "csv": csv_chunks}
