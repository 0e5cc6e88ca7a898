"""Researchers' API tokens: one per researcher, created, rotated or revoked from a page.

Scripts send it as `Authorization: Token <key>`; the browser uses its session instead.
"""

from django.db import transaction
from rest_framework.authtoken.models import Token


def api_token_of(user) -> Token | None:
    return Token.objects.filter(user=user).first()


@transaction.atomic
def api_token_rotate(*, user) -> Token:
    """A new token for the user; the old one, if any, stops working at once."""
    Token.objects.filter(user=user).delete()
    return Token.objects.create(user=user)


def api_token_revoke(*, user) -> bool:
    """Remove the user's token; True when there was one."""
    deleted, _ = Token.objects.filter(user=user).delete()
    return bool(deleted)
