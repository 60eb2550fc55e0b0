"""RunRollup.packed: each day/month rollup's sketches as int32 triples (rollups.packed), so a
board merges today's rows without parsing their JSON; existing rows are filled from their JSON
(the same bins, so the same figures)."""

import json

from django.db import migrations, models

_BATCH = 5_000


def fill_packed(apps, schema_editor) -> None:
    from benchmarks.rollups import packed, sketch

    connection = schema_editor.connection
    last = 0
    with connection.cursor() as cursor:
        while True:
            cursor.execute(
                "SELECT id, sketches FROM benchmarks_runrollup WHERE id > %s AND packed IS NULL "
                "ORDER BY id LIMIT %s",
                [last, _BATCH],
            )
            rows = cursor.fetchall()
            if not rows:
                return
            updates = []
            for row_id, sketches in rows:
                if isinstance(sketches, str | bytes):
                    sketches = json.loads(sketches)
                updates.append((packed.pack(sketch.triples(sketches or {})), row_id))
            _write(cursor, updates, postgresql=connection.vendor == "postgresql")
            last = rows[-1][0]


def _write(cursor, updates: list[tuple[bytes, int]], *, postgresql: bool) -> None:
    if postgresql:  # one statement per batch: a statement per row took minutes per 100,000
        cursor.execute(
            "UPDATE benchmarks_runrollup r SET packed = v.packed "
            "FROM unnest(%s::bytea[], %s::bigint[]) AS v(packed, id) WHERE r.id = v.id",
            [[packed for packed, _ in updates], [row_id for _, row_id in updates]],
        )
    else:
        cursor.executemany("UPDATE benchmarks_runrollup SET packed = %s WHERE id = %s", updates)


class Migration(migrations.Migration):
    dependencies = [
        ("benchmarks", "0023_run_origin"),
    ]

    operations = [
        migrations.AddField(
            model_name="runrollup",
            name="packed",
            field=models.BinaryField(blank=True, default=None, null=True),
        ),
        migrations.RunPython(fill_packed, migrations.RunPython.noop, elidable=True),
    ]
