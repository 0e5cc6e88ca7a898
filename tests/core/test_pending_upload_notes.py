"""A note kept beside a waiting file: read back as written, gone with its file, never
counted against the quota."""

import os
import time

import pytest

from cfannotate.core.pending_uploads import (
    pending_upload_delete,
    pending_upload_note,
    pending_upload_note_save,
    pending_upload_quota,
    pending_upload_save,
    pending_uploads_purge,
)


@pytest.fixture(autouse=True)
def upload_dir(settings, tmp_path):
    settings.UPLOAD_DIR = tmp_path / "uploads"
    return settings.UPLOAD_DIR


def save(user, scope="campaign:1:originals"):
    return pending_upload_save(content=b"text\nA.\n", file_name="a.csv", user=user, scope=scope)


def test_a_note_reads_back_as_written(researcher):
    upload = save(researcher)
    assert pending_upload_note(upload) is None
    pending_upload_note_save(upload, {"rows": 1, "mapping": {"text": "text", "id": None}})
    assert pending_upload_note(upload) == {"rows": 1, "mapping": {"text": "text", "id": None}}
    pending_upload_note_save(upload, {"rows": 2})  # replaces the one before
    assert pending_upload_note(upload) == {"rows": 2}
    assert pending_upload_quota(user=researcher).files == 1  # the file, not its note


def test_a_note_that_is_not_an_object_reads_as_none(researcher, upload_dir):
    upload = save(researcher)
    pending_upload_note_save(upload, {"rows": 1})
    (note,) = upload_dir.glob("*.note.json")
    for text in ("[1, 2]", "{broken"):
        note.write_text(text)
        assert pending_upload_note(upload) is None


def test_a_note_goes_with_its_file(researcher, upload_dir):
    first = save(researcher)
    pending_upload_note_save(first, {"rows": 1})
    second = save(researcher)  # replaces the first file of the scope, and its note
    assert pending_upload_note(first) is None and not list(upload_dir.glob("*.note.json"))
    pending_upload_note_save(second, {"rows": 2})
    pending_upload_delete(second)
    assert not list(upload_dir.iterdir())
    third = save(researcher, scope="campaign:2:originals")
    pending_upload_note_save(third, {"rows": 3})
    day_ago = time.time() - 2 * 24 * 3600
    for path in upload_dir.iterdir():
        os.utime(path, (day_ago, day_ago))
    assert pending_uploads_purge() == 2 and not list(upload_dir.iterdir())
