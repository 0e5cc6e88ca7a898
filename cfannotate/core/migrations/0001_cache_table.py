"""The database cache's table (settings.CACHES), so `migrate` alone prepares a new install.

Rate limits are counted in that cache; `createcachetable` skips a table that exists.
"""

from django.core.management import call_command
from django.db import migrations


def create_cache_table(apps, schema_editor):
    call_command("createcachetable", database=schema_editor.connection.alias, verbosity=0)


class Migration(migrations.Migration):
    dependencies = []

    operations = [migrations.RunPython(create_cache_table, migrations.RunPython.noop)]
