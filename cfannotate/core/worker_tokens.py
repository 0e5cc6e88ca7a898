"""Signed tokens that stand in for a worker's password: one per assignment, one per page.

The assignment token goes in the worker's URLs. It is `django.core.signing` over the
assignment id and a random per-assignment nonce, so it cannot be guessed or forged,
and rotating the nonce revokes it. It carries no timestamp: the URL stays the same for
the assignment's life, so reloads and bookmarks keep working.

Worker pages must work inside a crowd platform's iframe, where browsers block
third-party cookies, so worker forms do not rely on the CSRF cookie: each page carries
a form token derived from the same nonce, which a forged cross-site request cannot know.

A worker id in a platform's URL is not proof of anything. At entry the platform's ids
(worker, assignment, HIT or study) are stored on the assignment and a digest of them
goes into the token (`b`): an assignment is never bound to another platform session
(`services.assignment_enter` refuses a second one), a token for other ids than the
assignment's is refused, and approval and payment check the same ids against the
platform's API (`cfannotate/crowd/providers.md`).

A personal invitation link names one worker: its token is signed with its own salt over
the link's id, the worker's id and the link's expiry, so a name typed into a URL
(`?worker=...`) is never taken as anyone's identity. The token alone is not enough: the
link it names must still be in the database, unrevoked and unexpired.

An anonymous worker (one who came through a campaign's link) gets a short resume code,
to type on the campaign's page from another device: the assignment's id and a digest of
its nonce, so rotating the nonce revokes it too. It is short enough to copy by hand, so
failed tries are rate-limited (`cfannotate.core.throttles.RESUME_FAILURES`).
"""

import base64
import hmac
import re
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime

from django.core import signing
from django.utils.crypto import salted_hmac

from cfannotate.core.exceptions import Forbidden

ASSIGNMENT_SALT = "cfannotate.crowd.assignment"
FORM_SALT = "cfannotate.crowd.form"
JOIN_SALT = "cfannotate.crowd.join"
LINK_SALT = "cfannotate.crowd.link"
ENTRY_SALT = "cfannotate.crowd.entry"
BINDING_SALT = "cfannotate.crowd.binding"
PERSONAL_LINK_SALT = "cfannotate.crowd.personal-link"
RESUME_SALT = "cfannotate.crowd.resume"
RESUME_DIGEST_LENGTH = 10  # base32 characters: 50 bits, with failed tries rate-limited
RESUME_CODE = re.compile(rf"^(\d{{1,12}})-([A-Z2-7]{{{RESUME_DIGEST_LENGTH}}})$")
BAD_LINK = "This link is not valid. Open the task again from the page that sent you here."


def new_nonce() -> str:
    return secrets.token_urlsafe(24)


@dataclass(frozen=True)
class AssignmentClaim:
    assignment_id: int
    nonce: str
    binding: str = ""  # digest of the platform ids bound at entry; empty in older tokens


def assignment_token(*, assignment_id: int, nonce: str, binding: str = "") -> str:
    payload = {"a": assignment_id, "n": nonce}
    if binding:
        payload["b"] = binding
    return signing.Signer(salt=ASSIGNMENT_SALT).sign_object(payload)


def assignment_token_read(token: str) -> AssignmentClaim:
    """The assignment a token names; Forbidden when it was tampered with or is not a token."""
    try:
        payload = signing.Signer(salt=ASSIGNMENT_SALT).unsign_object(token)
        return AssignmentClaim(
            assignment_id=int(payload["a"]),
            nonce=str(payload["n"]),
            binding=str(payload.get("b", "")),
        )
    except (signing.BadSignature, KeyError, TypeError, ValueError, AttributeError):
        raise Forbidden(BAD_LINK) from None


def assignment_binding(assignment) -> str:
    """A digest of the platform ids an assignment was bound to at entry."""
    ids = "|".join(
        [
            assignment.worker.platform,
            assignment.worker.external_id,
            assignment.platform_assignment_id,
            assignment.platform_task_id,
        ]
    )
    return salted_hmac(BINDING_SALT, ids, algorithm="sha256").hexdigest()[:24]


def worker_token(assignment) -> str:
    """The token for a worker's URLs, carrying the platform ids bound at entry."""
    return assignment_token(
        assignment_id=assignment.id,
        nonce=assignment.token_nonce,
        binding=assignment_binding(assignment),
    )


def assignment_binding_check(token: str, assignment) -> None:
    """Forbidden when the token was minted for other platform ids than the assignment has now."""
    claim = assignment_token_read(token)
    if claim.binding and not hmac.compare_digest(claim.binding, assignment_binding(assignment)):
        raise Forbidden(
            "This link belongs to an earlier assignment on your platform. "
            "Open the task again from the platform."
        )


def form_token(nonce: str) -> str:
    return salted_hmac(FORM_SALT, nonce, algorithm="sha256").hexdigest()


def form_token_check(nonce: str, given: str | None) -> None:
    # Bytes: compare_digest refuses str with non-ASCII characters, which anyone can post.
    expected = form_token(nonce).encode()
    if not given or not hmac.compare_digest(expected, given.encode("utf-8", "replace")):
        raise Forbidden(
            "This page is out of date or was not sent by cfannotate. Reload it and try again."
        )


def join_token(campaign_id: int) -> str:
    """The invitation token of a campaign's link (stable, so the link can be shared)."""
    return signing.Signer(salt=JOIN_SALT).sign_object({"c": campaign_id})


def join_token_read(token: str) -> int:
    try:
        return int(signing.Signer(salt=JOIN_SALT).unsign_object(token)["c"])
    except (signing.BadSignature, KeyError, TypeError, ValueError):
        raise Forbidden(BAD_LINK) from None


def link_token(link_id: int) -> str:
    """The token of a named invitation link (one with a name and maybe a quota)."""
    return signing.Signer(salt=LINK_SALT).sign_object({"l": link_id})


def link_token_read(token: str) -> int:
    try:
        return int(signing.Signer(salt=LINK_SALT).unsign_object(token)["l"])
    except (signing.BadSignature, KeyError, TypeError, ValueError):
        raise Forbidden(BAD_LINK) from None


def entry_token(publication_id: int) -> str:
    """The token in a publication's entry URL (the MTurk ExternalURL, the Prolific study URL)."""
    return signing.Signer(salt=ENTRY_SALT).sign_object({"p": publication_id})


def entry_token_read(token: str) -> int:
    try:
        return int(signing.Signer(salt=ENTRY_SALT).unsign_object(token)["p"])
    except (signing.BadSignature, KeyError, TypeError, ValueError):
        raise Forbidden(BAD_LINK) from None


@dataclass(frozen=True)
class PersonalLinkClaim:
    link_id: int
    worker: str  # the worker's id (`Worker.external_id`) the link was made for
    expires_at: datetime


def personal_link_token(*, link_id: int, worker: str, expires_at: datetime) -> str:
    """The token of a personal link: the link, its worker and its expiry, signed."""
    payload = {"p": link_id, "w": worker, "e": int(expires_at.timestamp())}
    return signing.Signer(salt=PERSONAL_LINK_SALT).sign_object(payload)


def personal_link_token_read(token: str) -> PersonalLinkClaim:
    """What a personal link's token says; Forbidden when it is unsigned or tampered with."""
    try:
        payload = signing.Signer(salt=PERSONAL_LINK_SALT).unsign_object(token)
        return PersonalLinkClaim(
            link_id=int(payload["p"]),
            worker=str(payload["w"]),
            expires_at=datetime.fromtimestamp(int(payload["e"]), tz=UTC),
        )
    except (
        signing.BadSignature,
        KeyError,
        TypeError,
        ValueError,
        AttributeError,
        OverflowError,
        OSError,
    ):
        raise Forbidden(BAD_LINK) from None


def _resume_digest(nonce: str) -> str:
    digest = salted_hmac(RESUME_SALT, nonce, algorithm="sha256").digest()
    return base64.b32encode(digest).decode()[:RESUME_DIGEST_LENGTH]


def resume_code(assignment) -> str:
    """The code an anonymous worker types to come back to `assignment` (`12-ABCDE23456`)."""
    return f"{assignment.id}-{_resume_digest(assignment.token_nonce)}"


def resume_code_parse(code: str) -> int | None:
    """The assignment id a code names, or None when it is not shaped like a code.

    Spaces are dropped and case is ignored, as people copy codes by hand.
    """
    match = RESUME_CODE.match("".join(code.split()).upper())
    return int(match[1]) if match else None


def resume_code_matches(code: str, nonce: str) -> bool:
    expected = _resume_digest(nonce).encode()
    given = "".join(code.split()).upper().rpartition("-")[2]
    return hmac.compare_digest(expected, given.encode("utf-8", "replace"))
