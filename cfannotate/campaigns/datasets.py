"""Reading dataset files into plain records for `originals_import`."""

import json
from pathlib import Path

from cfannotate.core.exceptions import InvalidInput


def read_jsonl(path: Path) -> list[dict]:
    """Every line one JSON object; a bad line is reported with its number."""
    records = []
    errors = {}
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                errors[f"line {number}"] = [f"not valid JSON: {error.msg}"]
                continue
            if not isinstance(record, dict):
                errors[f"line {number}"] = ["each line must be a JSON object"]
                continue
            records.append(record)
    if errors:
        raise InvalidInput(
            f"{path.name}: {len(errors)} line(s) are not JSON objects.", fields=errors
        )
    return records
