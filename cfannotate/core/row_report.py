"""Reporting the bad rows of an import, the same way everywhere: all rows or none.

Every import (originals, candidates, gold rounds, predictions, from a page, the API or a
command) checks every row first. Then it stores them all, or raises one InvalidInput
that names each bad row under its place in the file ("row 3" as a spreadsheet counts,
"line 3" in JSONL), in file order, the first MAX_ROW_ERRORS_REPORTED of them.
Files are read by `cfannotate.core.tabular`.
"""

import re
from dataclasses import dataclass

from cfannotate.core.exceptions import InvalidInput
from cfannotate.core.text import counted

MAX_ROW_ERRORS_REPORTED = 50
_NUMBER = re.compile(r"(\d+)$")


@dataclass(frozen=True)
class RowError:
    """One problem of one record, numbered from 1 for the first record."""

    row: int
    field: str
    message: str


def rows_invalid(
    errors: dict[str, list[str]], *, nothing: str = "nothing was imported"
) -> InvalidInput:
    """The one error for an import with bad rows: `errors` by place, shown in file order."""
    ordered = sorted(errors.items(), key=lambda item: _place_number(item[0]))
    shown = dict(ordered[:MAX_ROW_ERRORS_REPORTED])
    verb = "is" if len(errors) == 1 else "are"
    message = f"{counted(len(errors), 'row')} {verb} invalid; {nothing}."
    if len(errors) > len(shown):
        message += f" Only the first {len(shown)} are listed."
    return InvalidInput(message, fields=shown)


def row_errors_raise(errors: list[RowError], *, nothing: str = "nothing was imported") -> None:
    """Raise `rows_invalid` for the records' problems; nothing when there are none."""
    if not errors:
        return
    by_row: dict[str, list[str]] = {}
    for error in errors:
        by_row.setdefault(f"row {error.row}", []).append(f"{error.field}: {error.message}")
    raise rows_invalid(by_row, nothing=nothing)


def _place_number(place: str) -> int:
    found = _NUMBER.search(place)
    return int(found.group(1)) if found else 0
