"""Runs management commands, stopping on bad configuration with one clear sentence."""

import sys

from django.core.exceptions import ImproperlyConfigured


def _database_summary() -> str:
    from django.conf import settings

    db = settings.DATABASES["default"]
    if db["ENGINE"].endswith("sqlite3"):
        return f"SQLite file {db['NAME']}"
    return (
        f"PostgreSQL at {db.get('HOST') or 'localhost'}:{db.get('PORT') or 5432}/{db.get('NAME')}"
    )


def run_command_line(argv: list[str]) -> None:
    from django.core.management import execute_from_command_line
    from django.db.utils import OperationalError

    try:
        execute_from_command_line(argv)
    except ImproperlyConfigured as error:
        sys.stderr.write(f"cfannotate: configuration error: {error}\n")
        sys.exit(2)
    except OperationalError as error:
        reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        sys.stderr.write(
            f"cfannotate: cannot use the database ({_database_summary()}): {reason}. "
            "Check DATABASE_URL and that the server is running.\n"
        )
        sys.exit(2)
