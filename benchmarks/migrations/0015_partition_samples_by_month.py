"""PostgreSQL: benchmarks_sample becomes a table partitioned by month of `slot` (RANGE), with a
default partition and one per month from the oldest sample to three months ahead; rows are
copied across. PostgreSQL needs the partition key in every unique key, so the primary key is
(id, slot) and the unique key (run, index, slot) (the same as (run, index): a run has one slot).
Nothing references a sample by foreign key. On SQLite this does nothing.
"""

from datetime import UTC, datetime

from django.db import migrations
from django.utils import timezone

TABLE = "benchmarks_sample"
AHEAD = 3


def _month(moment: datetime, add: int = 0) -> datetime:
    moment = moment.astimezone(UTC)
    index = moment.year * 12 + moment.month - 1 + add
    return datetime(index // 12, index % 12 + 1, 1, tzinfo=UTC)


def _swap(cursor, new: str, *, primary_key: str) -> None:
    """Copy every row into `new`, drop the old table, give `new` its name, keys and indexes.

    Names, bounds and definitions come from the catalogue and from dates, never from input.
    """
    cursor.execute(
        "SELECT format('ADD CONSTRAINT %%I %%s', conname, pg_get_constraintdef(oid)) "
        "FROM pg_constraint WHERE conrelid = %s::regclass AND contype = 'f'",
        [TABLE],
    )
    foreign = [row[0] for row in cursor.fetchall()]
    cursor.execute(
        "SELECT indexdef FROM pg_indexes WHERE tablename = %s AND indexname NOT IN "
        "(SELECT conname FROM pg_constraint WHERE conrelid = %s::regclass)",
        [TABLE, TABLE],
    )
    indexes = [row[0] for row in cursor.fetchall()]
    cursor.execute(
        "SELECT string_agg(quote_ident(attname), ', ' ORDER BY attnum) FROM pg_attribute "
        "WHERE attrelid = %s::regclass AND attnum > 0 AND NOT attisdropped",
        [TABLE],
    )
    (columns,) = cursor.fetchone()
    # Ids continue where they were: a sequence of our own, since the old one (an identity
    # sequence, or ours) is dropped with the old table.
    cursor.execute(f"SELECT coalesce(max(id), 0) FROM {TABLE}")  # noqa: S608
    (last,) = cursor.fetchone()
    cursor.execute(f"CREATE SEQUENCE {TABLE}_id_seq_next AS bigint")
    cursor.execute(f"SELECT setval('{TABLE}_id_seq_next', %s, %s)", [max(last, 1), last > 0])
    cursor.execute(f"INSERT INTO {new} ({columns}) SELECT {columns} FROM {TABLE}")  # noqa: S608
    cursor.execute(f"DROP TABLE {TABLE}")
    cursor.execute(f"ALTER TABLE {new} RENAME TO {TABLE}")
    cursor.execute(f"ALTER SEQUENCE {TABLE}_id_seq_next RENAME TO {TABLE}_id_seq")
    cursor.execute(f"ALTER SEQUENCE {TABLE}_id_seq OWNED BY {TABLE}.id")
    cursor.execute(f"ALTER TABLE {TABLE} ALTER COLUMN id SET DEFAULT nextval('{TABLE}_id_seq')")
    cursor.execute(f"ALTER TABLE {TABLE} ADD CONSTRAINT {TABLE}_pkey PRIMARY KEY ({primary_key})")
    cursor.execute(
        f'ALTER TABLE {TABLE} ADD CONSTRAINT sample_unique_index UNIQUE (run_id, "index", slot)'
    )
    for clause in foreign:
        cursor.execute(f"ALTER TABLE {TABLE} {clause}")
    for definition in indexes:
        cursor.execute(definition)


def partition(apps, schema_editor) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return
    new = f"{TABLE}_partitioned"
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(f"SELECT min(slot) FROM {TABLE}")  # noqa: S608
        (oldest,) = cursor.fetchone()
        # Without INCLUDING DEFAULTS (checks kept): the id default is set after the swap, on our sequence.
        cursor.execute(f"CREATE TABLE {new} (LIKE {TABLE} INCLUDING CONSTRAINTS) PARTITION BY RANGE (slot)")
        cursor.execute(f"CREATE TABLE {TABLE}_default PARTITION OF {new} DEFAULT")
        now = timezone.now()
        month, last = _month(oldest or now), _month(now, AHEAD)
        while month <= last:
            following = _month(month, 1)
            cursor.execute(
                f"CREATE TABLE {TABLE}_y{month.year:04d}m{month.month:02d} PARTITION OF {new} "
                f"FOR VALUES FROM ('{month.isoformat()}') TO ('{following.isoformat()}')"
            )
            month = following
        _swap(cursor, new, primary_key="id, slot")


def unpartition(apps, schema_editor) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return
    new = f"{TABLE}_plain"
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(f"CREATE TABLE {new} (LIKE {TABLE} INCLUDING CONSTRAINTS)")
        _swap(cursor, new, primary_key="id")


class Migration(migrations.Migration):
    dependencies = [("benchmarks", "0014_sample_slot_and_retention")]

    operations = [migrations.RunPython(partition, unpartition, elidable=False)]
