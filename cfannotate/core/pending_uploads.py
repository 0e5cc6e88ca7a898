"""Uploaded files kept on the server between a preview and its confirmation.

The file goes to settings.UPLOAD_DIR under a random name; the browser gets only a
signed token naming that file, the user and the scope it was uploaded for (e.g. one
campaign's originals), so a confirmation cannot point at another file, another
user's upload or another campaign. Files are deleted once used, and any file older
than a day is deleted whenever a new one is saved.

Each researcher keeps at most QUOTA_FILES files and QUOTA_BYTES at once: a file's
name starts with its owner, so the quota is counted from the directory, under a lock
that two uploads at the same moment cannot both slip past. A new upload for a scope
replaces the file kept for it before (a preview left open in another tab then says
the file is gone), so previews abandoned by reloading the page do not pile up.

Beside a file the caller may keep a note (JSON): what it made of the file, e.g. the
preview it showed, so that showing it again need not read the file. A note goes with
its file and does not count against the quota.
"""

import fcntl
import hashlib
import json
import os
import re
import secrets
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.core import signing

from cfannotate.core.exceptions import Conflict, Expired, NotFound

MAX_AGE_SECONDS = 24 * 60 * 60
# What one researcher may keep waiting for an import at once. The byte quota is never
# below settings.UPLOAD_MAX_BYTES, so the largest allowed file always fits alone.
QUOTA_FILES = 10
QUOTA_BYTES = 250 * 1024 * 1024
_SALT = "cfannotate.pending-upload"
_SUFFIX = ".upload"
_NOTE_SUFFIX = ".note.json"  # not *.upload: the quota counts only the files
_ID = re.compile(r"^[0-9a-f]{32}$")
_GONE = (
    "The uploaded file is no longer on the server (it was imported, cancelled, replaced "
    "by a newer upload or expired); upload it again."
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


@dataclass(frozen=True)
class UploadQuota:
    files: int  # kept now
    size: int  # their bytes
    max_files: int
    max_bytes: int
    oldest_expires_in: float  # seconds; 0 when nothing is kept


def _directory() -> Path:
    directory = Path(settings.UPLOAD_DIR)
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    return directory


def _owner_prefix(user) -> str:
    return f"u{user.pk}-"


def _scope_prefix(user, scope: str) -> str:
    # The scope is hashed: it is text of the caller's, and a name must be a plain name.
    return f"{_owner_prefix(user)}{hashlib.sha256(scope.encode()).hexdigest()[:16]}-"


def _path(directory: Path, *, user, scope: str, upload_id: str) -> Path:
    return directory / f"{_scope_prefix(user, scope)}{upload_id}{_SUFFIX}"


def _note_path(path: Path) -> Path:
    return path.with_name(path.name.removesuffix(_SUFFIX) + _NOTE_SUFFIX)


def _kept_by(directory: Path, user) -> list[Path]:
    return sorted(directory.glob(f"{_owner_prefix(user)}*{_SUFFIX}"))


@contextmanager
def _locked(directory: Path) -> Iterator[None]:
    """Hold the upload directory's lock: one quota check and write at a time, all processes."""
    handle = os.open(directory, os.O_RDONLY)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield
    finally:
        os.close(handle)  # releases the lock


def quota_max_bytes() -> int:
    """The byte quota, never below one file of the largest size allowed."""
    return max(QUOTA_BYTES, settings.UPLOAD_MAX_BYTES)


def pending_upload_quota(*, user, not_counting: tuple[Path, ...] = ()) -> UploadQuota:
    """What `user` keeps now against the quota (leaving out the files `not_counting`)."""
    files, used, oldest = 0, 0, None
    for path in _kept_by(_directory(), user):
        if path in not_counting:
            continue
        try:
            stat = path.stat()
        except FileNotFoundError:
            continue  # deleted meanwhile
        files += 1
        used += stat.st_size
        oldest = stat.st_mtime if oldest is None else min(oldest, stat.st_mtime)
    expires_in = 0.0 if oldest is None else max(0.0, oldest + MAX_AGE_SECONDS - time.time())
    return UploadQuota(files, used, QUOTA_FILES, quota_max_bytes(), expires_in)


def _size(size: int) -> str:
    if size < 1024 * 1024:
        return f"{size / 1024:,.1f} KB"
    return f"{size / (1024 * 1024):,.1f} MB"


def _duration(seconds: float) -> str:
    minutes = max(1, round(seconds / 60))
    if minutes < 60:
        return f"{minutes} min"
    return f"{minutes // 60} h {minutes % 60} min" if minutes % 60 else f"{minutes // 60} h"


def _over_quota(quota: UploadQuota, *, size: int) -> Conflict:
    return Conflict(
        f"You already keep {quota.files} uploaded file{'s' if quota.files != 1 else ''} "
        f"({_size(quota.size)}) waiting to be imported, and this one "
        f"({_size(size)}) would pass the limit of {quota.max_files} files and "
        f"{_size(quota.max_bytes)} per researcher. Import or cancel a preview you have "
        "open (uploading again to the same campaign also replaces its waiting file), or wait: "
        f"a waiting file is deleted a day after its upload, the oldest in "
        f"{_duration(quota.oldest_expires_in)}. Nothing was kept of this file.",
        fields={
            "file": [
                f"Upload quota reached: {quota.files} of {quota.max_files} files, "
                f"{_size(quota.size)} of {_size(quota.max_bytes)} kept."
            ]
        },
    )


def pending_upload_save(*, content: bytes, file_name: str, user, scope: str) -> PendingUpload:
    """Keep `content` for `user` and `scope`; the returned token finds it again for a day.

    The file kept before for the same user and scope is replaced. Conflict when the
    user's other kept files leave no room for this one under the quota.
    """
    pending_uploads_purge()
    directory = _directory()
    upload_id = secrets.token_hex(16)
    path = _path(directory, user=user, scope=scope, upload_id=upload_id)
    with _locked(directory):
        replaced = tuple(directory.glob(f"{_scope_prefix(user, scope)}*{_SUFFIX}"))
        quota = pending_upload_quota(user=user, not_counting=replaced)
        if quota.files + 1 > quota.max_files or quota.size + len(content) > quota.max_bytes:
            raise _over_quota(quota, size=len(content))
        # Written aside and renamed, so a reader never sees half a file.
        handle, partial = tempfile.mkstemp(dir=directory, prefix=".partial-")
        with os.fdopen(handle, "wb") as partial_file:
            partial_file.write(content)
        os.replace(partial, path)
        for old in replaced:
            old.unlink(missing_ok=True)
            _note_path(old).unlink(missing_ok=True)
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
    path = _path(_directory(), user=user, scope=scope, upload_id=upload_id)
    if not path.exists():
        raise Expired(_GONE)
    return PendingUpload(token=token, file_name=str(payload.get("name", "")), path=path)


def pending_upload_delete(upload: PendingUpload) -> None:
    """Forget a kept file (and its note); its room in the owner's quota is free at once."""
    upload.path.unlink(missing_ok=True)
    _note_path(upload.path).unlink(missing_ok=True)


def pending_upload_note_save(upload: PendingUpload, note: dict) -> None:
    """Keep `note` (JSON) beside the upload, replacing the one before. A note only spares
    reading the file: one that cannot be written (disk full) is not kept, and nothing fails."""
    text = json.dumps(note)
    path = _note_path(upload.path)
    try:
        handle, partial = tempfile.mkstemp(dir=path.parent, prefix=".partial-")
    except OSError:
        return
    try:
        with os.fdopen(handle, "w") as partial_file:
            partial_file.write(text)
        os.replace(partial, path)  # a reader never sees half a note
    except OSError:
        Path(partial).unlink(missing_ok=True)


def pending_upload_note(upload: PendingUpload) -> dict | None:
    """The note kept beside the upload; None when there is none or it cannot be read."""
    try:
        note = json.loads(_note_path(upload.path).read_text())
    except (OSError, ValueError):
        return None
    return note if isinstance(note, dict) else None


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
