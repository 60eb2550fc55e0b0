"""The database cache and the throttle counters as UNLOGGED tables on PostgreSQL.

Both are disposable: an entry is recomputed on a miss and a counter starts again at the next
window. Logged, every write waited for its WAL flush (an fsync: 4 ms median, 20 ms p95 on the
bench machine while it was writing elsewhere; ~0.03 ms unlogged), and every API request writes
its throttle counter, every cold advice its cache entry. A crash of the database server empties
them (docs/operations.md); no measurement lives in either.
"""

from django.db import migrations

TABLES = ("tokspeed_cache", "tokspeed_throttle")


def persistence(kind: str):
    def alter(apps, schema_editor):
        if schema_editor.connection.vendor != "postgresql":
            return
        for table in TABLES:
            schema_editor.execute(f"ALTER TABLE {schema_editor.quote_name(table)} SET {kind}")

    return alter


class Migration(migrations.Migration):
    dependencies = [("dashboard", "0003_throttle_counts")]
    operations = [migrations.RunPython(persistence("UNLOGGED"), persistence("LOGGED"))]
