"""Writes and reads of many rows in a few statements: a value per row without
`bulk_update`'s CASE per row, and a large query read a range of keys at a time.

`QuerySet.bulk_update` sends `SET col = CASE WHEN id = 1 THEN … WHEN id = 2 THEN … END`
per batch: Django builds an expression per row, and 200,000 rows took minutes, mostly in
Python. `rows_update` sends the rows as a VALUES list joined on the primary key instead.
"""

from collections.abc import Iterable, Iterator, Sequence
from itertools import islice

from django.db import connection, models, transaction

# Rows per UPDATE where the backend has no limit on parameters (PostgreSQL). psycopg's
# server-side binding takes at most 65,535 parameters a statement; this stays below it.
ROWS_PER_STATEMENT = 5000
_MAX_PARAMETERS = 65_535


def batches(items: Iterable, size: int) -> Iterator[list]:
    """`items` in lists of `size` (the last one shorter)."""
    iterator = iter(items)
    while batch := list(islice(iterator, size)):
        yield batch


def parameters_per_statement() -> int:
    """How many parameters one statement may hold on this database (SQLite: 999 by
    Django's reckoning, the oldest SQLite's limit)."""
    return connection.features.max_query_params or _MAX_PARAMETERS


def _updates_from_values() -> bool:
    """Whether the database takes `UPDATE … FROM (VALUES …)`: PostgreSQL, SQLite 3.33+."""
    if connection.vendor == "postgresql":
        return True
    if connection.vendor == "sqlite":
        return connection.Database.sqlite_version_info >= (3, 33, 0)
    return False


def rows_update(
    model: type[models.Model],
    fields: Sequence[str],
    rows: Iterable[Sequence],
    *,
    rows_per_statement: int = ROWS_PER_STATEMENT,
) -> int:
    """Set `fields` of each row of `model` named by primary key: `rows` are
    (pk, value of fields[0], value of fields[1], …). Returns the rows given.

    One `UPDATE … FROM (VALUES …)` per batch, all in one transaction; where the database
    lacks UPDATE FROM (SQLite before 3.33), one executemany of plain UPDATEs per batch.
    Values go through each field's `get_db_prep_save`, as `save()` sends them; a foreign
    key takes the related row's pk. Nothing is validated, and no signals are sent.
    """
    meta = model._meta
    targets = [meta.get_field(name) for name in fields]
    quote = connection.ops.quote_name
    table, pk = quote(meta.db_table), quote(meta.pk.column)
    per_statement = max(
        1, min(rows_per_statement, parameters_per_statement() // (len(targets) + 1))
    )
    from_values = _updates_from_values()
    written = 0
    with transaction.atomic(savepoint=False), connection.cursor() as cursor:
        for batch in batches(rows, per_statement):
            params = [
                [meta.pk.get_db_prep_save(row[0], connection)]
                + [
                    field.get_db_prep_save(value, connection)
                    for field, value in zip(targets, row[1:], strict=True)
                ]
                for row in batch
            ]
            if from_values:
                cursor.execute(*_update_from_values_sql(table, pk, targets, params))
            else:
                assignments = ", ".join(f"{quote(field.column)} = %s" for field in targets)
                cursor.executemany(
                    # Names quoted from the model's meta; values are parameters.
                    f"UPDATE {table} SET {assignments} WHERE {pk} = %s",  # noqa: S608
                    [values[1:] + values[:1] for values in params],
                )
            written += len(batch)
    return written


def _update_from_values_sql(table: str, pk: str, targets, params) -> tuple[str, list]:
    """The UPDATE … FROM (VALUES …) statement of one batch, and its flat parameters.

    A VALUES list names its columns column1, column2, … on both databases. PostgreSQL
    types a column of NULLs alone as text, so each value is cast to its column's type
    there; SQLite converts by the column's affinity, as for any UPDATE.
    """
    quote = connection.ops.quote_name
    row = "(" + ", ".join(["%s"] * (len(targets) + 1)) + ")"

    def cast(index: int, field) -> str:
        column = f"v.column{index}"
        if connection.vendor == "postgresql":
            return f"CAST({column} AS {field.db_type(connection)})"
        return column

    assignments = ", ".join(
        f"{quote(field.column)} = {cast(index, field)}"
        for index, field in enumerate(targets, start=2)
    )
    # Names quoted from the model's meta; values are parameters.
    sql = (
        f"UPDATE {table} SET {assignments} "  # noqa: S608
        f"FROM (VALUES {', '.join([row] * len(params))}) AS v "
        f"WHERE {table}.{pk} = v.column1"
    )
    return sql, [value for values in params for value in values]


def key_ranges(queryset: models.QuerySet, field: str, size: int) -> Iterator[tuple]:
    """(first, last) of each run of `size` distinct values of `field` in `queryset`, in
    order: `queryset.filter(<field>__gte=first, <field>__lte=last)` reads one run. One query."""
    keys = list(queryset.order_by(field).values_list(field, flat=True).distinct())
    for start in range(0, len(keys), size):
        run = keys[start : start + size]
        yield run[0], run[-1]
