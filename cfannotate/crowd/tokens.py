"""Signed tokens that stand in for a worker's password: one per assignment, one per page.

The assignment token goes in the worker's URLs. It is `django.core.signing` over the
assignment id and a random per-assignment nonce, so it cannot be guessed or forged,
and rotating the nonce revokes it. It carries no timestamp: the URL stays the same for
the assignment's life, so reloads and bookmarks keep working.

Worker pages must work inside a crowd platform's iframe, where browsers block
third-party cookies, so worker forms do not rely on the CSRF cookie: each page carries
a form token derived from the same nonce, which a forged cross-site request cannot know.
"""

import hmac
import secrets
from dataclasses import dataclass

from django.core import signing
from django.utils.crypto import salted_hmac

from cfannotate.core.exceptions import Forbidden

ASSIGNMENT_SALT = "cfannotate.crowd.assignment"
FORM_SALT = "cfannotate.crowd.form"
JOIN_SALT = "cfannotate.crowd.join"
BAD_LINK = "This link is not valid. Open the task again from the page that sent you here."


def new_nonce() -> str:
    return secrets.token_urlsafe(24)


@dataclass(frozen=True)
class AssignmentClaim:
    assignment_id: int
    nonce: str


def assignment_token(*, assignment_id: int, nonce: str) -> str:
    return signing.Signer(salt=ASSIGNMENT_SALT).sign_object({"a": assignment_id, "n": nonce})


def assignment_token_read(token: str) -> AssignmentClaim:
    """The assignment a token names; Forbidden when it was tampered with or is not a token."""
    try:
        payload = signing.Signer(salt=ASSIGNMENT_SALT).unsign_object(token)
        return AssignmentClaim(assignment_id=int(payload["a"]), nonce=str(payload["n"]))
    except (signing.BadSignature, KeyError, TypeError, ValueError):
        raise Forbidden(BAD_LINK) from None


def form_token(nonce: str) -> str:
    return salted_hmac(FORM_SALT, nonce, algorithm="sha256").hexdigest()


def form_token_check(nonce: str, given: str | None) -> None:
    if not given or not hmac.compare_digest(form_token(nonce), given):
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
