"""Researchers' API tokens: one per researcher, created, rotated or revoked from a page.

Scripts send it as `Authorization: Token <key>`; the browser uses its session instead.
Only the key's SHA-256 is stored (`ApiToken`): the key is shown once, when it is made,
and `ApiTokenAuthentication` finds the token by hashing the key a request presents.
"""

import hashlib
import secrets
from dataclasses import dataclass

from django.db import transaction
from rest_framework.authentication import TokenAuthentication
from rest_framework.exceptions import AuthenticationFailed

from cfannotate.core.models import KEY_ENDING_CHARS, ApiToken

KEY_BYTES = 20  # 40 hex characters, the length of DRF's keys that scripts already hold


@dataclass(frozen=True)
class NewApiToken:
    token: ApiToken
    key: str  # the only place the key ever is: show it, then let it go


def api_token_digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def api_token_of(user) -> ApiToken | None:
    return ApiToken.objects.filter(user=user).first()


def api_token_for_key(key: str) -> ApiToken | None:
    """The token whose key this is, with its user; None for any other text."""
    return ApiToken.objects.select_related("user").filter(key_digest=api_token_digest(key)).first()


@transaction.atomic
def api_token_rotate(*, user) -> NewApiToken:
    """A new token for the user; the old one, if any, stops working at once."""
    ApiToken.objects.filter(user=user).delete()
    key = secrets.token_hex(KEY_BYTES)
    token = ApiToken(
        user=user, key_digest=api_token_digest(key), key_ending=key[-KEY_ENDING_CHARS:]
    )
    token.full_clean()
    token.save()
    return NewApiToken(token=token, key=key)


def api_token_revoke(*, user) -> bool:
    """Remove the user's token; True when there was one."""
    deleted, _ = ApiToken.objects.filter(user=user).delete()
    return bool(deleted)


class ApiTokenAuthentication(TokenAuthentication):
    """DRF's `Authorization: Token <key>`, looked up by the key's digest, not the key.

    A subclass of DRF's class, so its header parsing, its `WWW-Authenticate: Token` and
    the OpenAPI `tokenAuth` scheme stay as they were.
    """

    def authenticate_credentials(self, key):
        token = api_token_for_key(key)
        if token is None:
            raise AuthenticationFailed("Invalid token.")
        if not token.user.is_active:
            raise AuthenticationFailed("User inactive or deleted.")
        return (token.user, token)
