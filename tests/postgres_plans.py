"""What PostgreSQL can answer a read with: for the tests that pin a read to an index.

A test database is too small for the planner to prefer an index on its own, so
`index_plan` forbids sequential and bitmap scans and joins other than by hashing
(each table is then read on its own, not looked up row by row): a table that the plan
still reads with an Index Scan rather than an Index Only Scan has no index holding
every column the query needs of it. Plans are PostgreSQL's: the tests skip on SQLite.
"""

import os
import re

import pytest
from django.db import connection

postgres_only = pytest.mark.skipif(
    not os.environ.get("DATABASE_URL", "").startswith("postgres"),
    reason="query plans are PostgreSQL's (set DATABASE_URL to a PostgreSQL database)",
)


def index_plan(sql: str, params=(), *, only_index: tuple[str, str] | None = None) -> str:
    """EXPLAIN of `sql` with only index scans and hash joins allowed (in this transaction).

    `only_index=(table, index)` hides the table's other plain indexes for the EXPLAIN (a
    savepoint drops them and is rolled back): on fresh test rows, which no VACUUM has
    marked all-visible, the planner may prefer a narrower index on the same column, so
    whether `index` holds every column the query needs is asked of it alone.
    """
    with connection.cursor() as cursor:
        for setting in (
            "enable_seqscan",
            "enable_bitmapscan",
            "enable_nestloop",
            "enable_mergejoin",
        ):
            cursor.execute(f"SET LOCAL {setting} = off")
        cursor.execute("SAVEPOINT index_plan")
        try:
            if only_index is not None:
                _drop_other_indexes(cursor, *only_index)
            cursor.execute(f"EXPLAIN {sql}", params)
            return "\n".join(row[0] for row in cursor.fetchall())
        finally:
            cursor.execute("ROLLBACK TO SAVEPOINT index_plan")


def _drop_other_indexes(cursor, table: str, keep: str) -> None:
    cursor.execute(
        "SELECT i.relname FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid "
        "WHERE x.indrelid = %s::regclass AND NOT x.indisprimary AND NOT x.indisunique "
        "AND i.relname <> %s",
        [table, keep],
    )
    for (name,) in cursor.fetchall():
        cursor.execute(f'DROP INDEX "{name}"')


def scans_of(plan: str, table: str) -> list[str]:
    """How the plan reads `table`, e.g. ["Index Only Scan using candidate_x", "Seq Scan"]."""
    node = rf"^\s*(?:->\s+)?([A-Z][A-Za-z ]*?Scan(?: using \S+)?) on {table}\b"
    return re.findall(node, plan, re.M)
