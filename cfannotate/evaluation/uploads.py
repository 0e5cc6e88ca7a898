"""Reading an uploaded JSONL file (one JSON object per line) of predictions or training rows.

The file is read as every upload is (`cfannotate.core.tabular`), so it is refused for
the same reasons in the same words: too large, not UTF-8 (with how to fix that), not
JSON; every bad line is named, and nothing is kept of a file with one.
"""

from cfannotate.core import tabular
from cfannotate.core.exceptions import InvalidInput

MAX_UPLOAD_BYTES = 20 * 1024 * 1024
# Predictions cover every original and candidate of a campaign; the byte limit binds first.
MAX_UPLOAD_ROWS = 1_000_000
LINES_NAMED = 50


def jsonl_rows(upload, *, field: str) -> list[dict]:
    """The objects of an uploaded JSONL file (Django's UploadedFile), for the form `field`."""
    try:
        content = tabular.upload_bytes(upload, max_bytes=MAX_UPLOAD_BYTES)
    except InvalidInput as error:
        raise _for_field(error, field) from None
    return jsonl_records(file_name=upload.name, content=content, field=field)


def jsonl_records(
    *, file_name: str, content: bytes, field: str, max_bytes: int = MAX_UPLOAD_BYTES
) -> list[dict]:
    """The objects of a JSONL file; any problem is InvalidInput on `field`, naming the lines."""
    try:
        return tabular.jsonl_objects(
            file_name=file_name, content=content, max_bytes=max_bytes, max_rows=MAX_UPLOAD_ROWS
        )
    except InvalidInput as error:
        raise _for_field(error, field) from None


def _for_field(error: InvalidInput, field: str) -> InvalidInput:
    """The file's error on the form or option `field`, each problem with its place."""
    problems = [
        problem if where == "file" else f"{where}: {problem}"
        for where, notes in error.fields.items()
        for problem in notes
    ]
    return InvalidInput(
        f"The {field.replace('_', ' ')} file is refused: {error.message}",
        fields={field: problems[:LINES_NAMED] or [error.message]},
    )
