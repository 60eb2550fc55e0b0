"""Writing generated rows fast: COPY (text format) on PostgreSQL, bulk_create elsewhere.

Rows are given as columns (attribute name → list of Python values, one per row). Model fields
the generator does not fill get their default, so a field added to Run or Sample later does not
break seeding. COPY text is built column by column: a year of history is ~2.6 million rows.
"""

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from django.db import connection, models
from django.utils import timezone

NULL = "\\N"
CHUNK_ROWS = 50_000


def _defaults(model: type[models.Model], given: Sequence[str]) -> dict[str, Any]:
    """Default values of the concrete fields not in `given` (the primary key excepted)."""
    defaults = {}
    for model_field in model._meta.concrete_fields:
        if model_field.primary_key or model_field.attname in given:
            continue
        if getattr(model_field, "auto_now", False) or getattr(model_field, "auto_now_add", False):
            defaults[model_field.attname] = timezone.now()
        else:
            defaults[model_field.attname] = model_field.get_default()
    return defaults


def write(model: type[models.Model], columns: dict[str, list]) -> list[int] | None:
    """Insert the rows. On PostgreSQL with an "id" column, the ids come from reserve_ids()."""
    constant = _defaults(model, list(columns))
    if connection.vendor == "postgresql":
        _copy(model, columns, constant)
        return columns.get("id")
    return _bulk_create(model, columns, constant)


def reserve_ids(model: type[models.Model], count: int) -> list[int] | None:
    """`count` fresh primary keys from the table's sequence (PostgreSQL; None elsewhere: the
    database assigns them on insert)."""
    if connection.vendor != "postgresql":
        return None
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT nextval(pg_get_serial_sequence(%s, %s)) FROM generate_series(1, %s)",
            [model._meta.db_table, model._meta.pk.column, count],
        )
        return [row[0] for row in cursor.fetchall()]


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")


def _text(value: Any) -> str:
    """One value in COPY's text format."""
    if value is None:
        return NULL
    if isinstance(value, bool):
        return "t" if value else "f"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, dict | list):
        return _escape(json.dumps(value))
    return _escape(str(value))


def _column_text(values: list) -> list[str]:
    """A whole column at once; numbers (the bulk of a sample) take the fast path."""
    sample = next((v for v in values if v is not None), None)
    if isinstance(sample, float | int) and not isinstance(sample, bool):
        return [NULL if v is None else repr(v) for v in values]
    return [_text(v) for v in values]


def _copy(model: type[models.Model], columns: dict[str, list], constant: dict) -> None:
    fields = {f.attname: f for f in model._meta.concrete_fields}
    names = [*columns, *constant]
    quoted = ", ".join(connection.ops.quote_name(fields[name].column) for name in names)
    suffix = "".join("\t" + _text(value) for value in constant.values())
    text_columns = [_column_text(values) for values in columns.values()]
    lines = ["\t".join(row) + suffix for row in zip(*text_columns, strict=True)]
    table = connection.ops.quote_name(model._meta.db_table)
    with connection.cursor() as cursor, cursor.copy(f"COPY {table} ({quoted}) FROM STDIN") as copy:
        for start in range(0, len(lines), CHUNK_ROWS):
            copy.write("\n".join(lines[start : start + CHUNK_ROWS]) + "\n")


def _bulk_create(model: type[models.Model], columns: dict[str, list], constant: dict) -> list[int]:
    names = [name for name in columns if name != "id"]
    objects = [
        model(**dict(zip(names, row, strict=True)), **constant)
        for row in zip(*(columns[name] for name in names), strict=True)
    ]
    model.objects.bulk_create(objects, batch_size=1_000)
    return [obj.pk for obj in objects]
