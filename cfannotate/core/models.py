"""Researchers' API tokens, stored as digests: the key itself is shown once, never kept."""

from django.conf import settings
from django.db import models
from django.db.models.functions import Length
from django.db.models.lookups import Exact
from django.utils import timezone

KEY_DIGEST_CHARS = 64  # SHA-256 in hex
KEY_ENDING_CHARS = 4


class ApiToken(models.Model):
    """One researcher's token; `Authorization: Token <key>` is checked by the key's digest.

    A key is 160 random bits, so a plain SHA-256 (not a slow password hash) is enough:
    nobody can guess a key from its digest, and a stolen database holds no usable key.
    """

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_token"
    )
    key_digest = models.CharField(max_length=KEY_DIGEST_CHARS, unique=True)
    key_ending = models.CharField(
        max_length=KEY_ENDING_CHARS, help_text="The key's last characters, to recognise it by."
    )
    # Not auto_now_add: the migration that hashed the earlier plain keys kept their dates.
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name = "API token"
        constraints = [
            # A plain key (40 characters) can never be stored by mistake.
            models.CheckConstraint(
                condition=Exact(Length("key_digest"), KEY_DIGEST_CHARS),
                name="api_token_stores_a_digest",
            ),
        ]

    def __str__(self) -> str:
        return f"API token …{self.key_ending} of {self.user}"
