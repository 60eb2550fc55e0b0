"""WindowRollup.near: each window row's sketch cut down to the bins around its quartiles
(rollups.packed.near), so a long board reads a few dozen bins per row instead of a year's.
Existing rows are filled from their packed sketch (a few thousand rows: 4 per endpoint and
workload per window); a row left without it is read from `packed` (the same figures)."""

from django.db import migrations, models

_BATCH = 500


def fill_near(apps, schema_editor) -> None:
    from benchmarks.rollups import packed

    connection = schema_editor.connection
    last = 0
    with connection.cursor() as cursor:
        while True:
            cursor.execute(
                "SELECT id, packed, runs, days FROM benchmarks_windowrollup WHERE id > %s "
                "ORDER BY id LIMIT %s",
                [last, _BATCH],
            )
            rows = cursor.fetchall()
            if not rows:
                return
            updates = [
                (packed.near(bytes(data), packed.margin_of(runs, days)), row_id)
                for row_id, data, runs, days in rows
            ]
            cursor.executemany(
                "UPDATE benchmarks_windowrollup SET near = %s WHERE id = %s", updates
            )
            last = rows[-1][0]


class Migration(migrations.Migration):
    dependencies = [
        ("benchmarks", "0024_runrollup_packed"),
    ]

    operations = [
        migrations.AddField(
            model_name="windowrollup",
            name="near",
            field=models.BinaryField(blank=True, default=None, null=True),
        ),
        migrations.RunPython(fill_near, migrations.RunPython.noop, elidable=True),
    ]
