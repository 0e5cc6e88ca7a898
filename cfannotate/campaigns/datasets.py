"""Reading dataset files into plain records for `originals_import` and `gold_rounds_import`.

A file is read as an upload is (`cfannotate.core.tabular`), so a command says what the
upload page would: which line is not JSON, which byte is not UTF-8 and how to fix it.
"""

from pathlib import Path

from django.conf import settings

from cfannotate.core import tabular


def read_jsonl(path: Path) -> list[dict]:
    """Every line one JSON object; a bad line is reported with its number."""
    return tabular.jsonl_objects(
        file_name=path.name,
        content=path.read_bytes(),
        max_bytes=settings.UPLOAD_MAX_BYTES,
        max_rows=settings.UPLOAD_MAX_ROWS,
    )
