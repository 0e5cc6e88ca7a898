"""Reading an uploaded JSONL file (one JSON object per line) of predictions or training rows."""

import json

from cfannotate.core.exceptions import InvalidInput

MAX_UPLOAD_BYTES = 20 * 1024 * 1024


def jsonl_rows(upload, *, field: str) -> list[dict]:
    """The objects of an uploaded JSONL file; any problem names the line and `field`."""

    def refuse(problem: str) -> InvalidInput:
        return InvalidInput(
            f"The {field.replace('_', ' ')} file is invalid: {problem}", fields={field: [problem]}
        )

    if upload.size > MAX_UPLOAD_BYTES:
        raise refuse(f"it is larger than {MAX_UPLOAD_BYTES // (1024 * 1024)} MB.")
    try:
        text = upload.read().decode("utf-8-sig")
    except UnicodeDecodeError:
        raise refuse("it is not UTF-8 text; save it as JSONL (UTF-8).") from None
    rows = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as error:
            raise refuse(f"line {number} is not JSON ({error.msg}).") from None
        if not isinstance(row, dict):
            raise refuse(f"line {number} is not a JSON object.")
        rows.append(row)
    if not rows:
        raise refuse("it holds no rows.")
    return rows
