"""Uploaded files kept on the server between a preview and its confirmation.

The file goes to settings.UPLOAD_DIR under a random name; the browser gets only a
signed token naming that file, the user and the scope it was uploaded for (e.g. one
campaign's originals), so a confirmation cannot point at another file, another
user's upload or another campaign. Files are deleted once used, and any file older
than a day is deleted whenever a new one is saved.
"""

import os
import re
import secrets
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.core import signing

from cfannotate.core.exceptions import Expired, NotFound

MAX_AGE_SECONDS = 24 * 60 * 60
_SALT = "cfannotate.pending-upload"
_SUFFIX = ".upload"
_ID = re.compile(r"^[0-9a-f]{32}$")
_GONE = (
    "The uploaded file is no longer on the server (it was imported, cancelled or "
    "expired); upload it again."
)


@dataclass(frozen=True)
class PendingUpload:
    token: str
    file_name: str  # as the researcher's computer named it; shown, never used as a path
    path: Path

    def content(self) -> bytes:
        try:
            return self.path.read_bytes()
        except FileNotFoundError:
            raise Expired(_GONE) from None


def _directory() -> Path:
    directory = Path(settings.UPLOAD_DIR)
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    return directory


def pending_upload_save(*, content: bytes, file_name: str, user, scope: str) -> PendingUpload:
    """Keep `content` for `user` and `scope`; the returned token finds it again for a day."""
    pending_uploads_purge()
    upload_id = secrets.token_hex(16)
    path = _directory() / f"{upload_id}{_SUFFIX}"
    # Written aside and renamed, so a reader never sees half a file.
    handle, partial = tempfile.mkstemp(dir=path.parent, prefix=".partial-")
    with os.fdopen(handle, "wb") as partial_file:
        partial_file.write(content)
    os.replace(partial, path)
    token = signing.dumps(
        {"id": upload_id, "user": user.pk, "scope": scope, "name": file_name[:200]},
        salt=_SALT,
        compress=True,
    )
    return PendingUpload(token=token, file_name=file_name[:200], path=path)


def pending_upload_get(*, token: str, user, scope: str) -> PendingUpload:
    """The upload the token names, if `user` made it for `scope` within the last day."""
    try:
        payload = signing.loads(token, salt=_SALT, max_age=MAX_AGE_SECONDS)
    except signing.SignatureExpired:
        raise Expired("The uploaded file expired after a day; upload it again.") from None
    except signing.BadSignature:
        raise NotFound("No such upload; upload the file again.") from None
    upload_id = payload.get("id") if isinstance(payload, dict) else None
    if (
        not isinstance(upload_id, str)
        or not _ID.match(upload_id)
        or payload.get("user") != user.pk
        or payload.get("scope") != scope
    ):
        # Another user's or another campaign's upload: as if it did not exist.
        raise NotFound("No such upload; upload the file again.")
    path = _directory() / f"{upload_id}{_SUFFIX}"
    if not path.exists():
        raise Expired(_GONE)
    return PendingUpload(token=token, file_name=str(payload.get("name", "")), path=path)


def pending_upload_delete(upload: PendingUpload) -> None:
    upload.path.unlink(missing_ok=True)


def pending_uploads_purge(*, older_than_seconds: int = MAX_AGE_SECONDS) -> int:
    """Delete the kept files (and broken partial ones) older than a day; returns how many."""
    cutoff = time.time() - older_than_seconds
    removed = 0
    for path in _directory().iterdir():
        try:
            if path.stat().st_mtime < cutoff:
                path.unlink()
                removed += 1
        except FileNotFoundError:
            continue  # another process removed it first
    return removed
