"""Tokens made before digests: each plain DRF key becomes its SHA-256, and the plain row goes.

Every key keeps working (the authentication hashes what a script sends); only the page
no longer shows it. Going back cannot bring the plain keys back, so it moves nothing:
the digests go with the table, and researchers make new tokens.
"""

import hashlib

from django.db import migrations


def hash_plain_keys(apps, schema_editor):
    PlainToken = apps.get_model("authtoken", "Token")
    ApiToken = apps.get_model("core", "ApiToken")
    ApiToken.objects.bulk_create(
        ApiToken(
            user_id=token.user_id,
            # The same digest as cfannotate.core.api_tokens, written out: migrations stay
            # as they ran, whatever later becomes of the module.
            key_digest=hashlib.sha256(token.key.encode()).hexdigest(),
            key_ending=token.key[-4:],
            created_at=token.created,
        )
        for token in PlainToken.objects.iterator()
    )
    PlainToken.objects.all().delete()


class Migration(migrations.Migration):
    dependencies = [
        ("core", "0002_api_token"),
        ("authtoken", "0004_alter_tokenproxy_options"),
    ]

    operations = [migrations.RunPython(hash_plain_keys, migrations.RunPython.noop)]
