"""The database cache's table (API throttle counters when the broker is not Redis).

Made by `migrate` so `make run`, the production recipe and tests need no extra step; the name
matches CACHES["default"]["LOCATION"] in settings. Existing tables are left as they are.
"""

from django.core.management.commands.createcachetable import Command as CreateCacheTable
from django.db import migrations

TABLE = "tokspeed_cache"


def create(apps, schema_editor):
    command = CreateCacheTable()
    command.verbosity = 0
    command.create_table(schema_editor.connection.alias, TABLE, dry_run=False)


def drop(apps, schema_editor):
    schema_editor.execute(f"DROP TABLE IF EXISTS {schema_editor.quote_name(TABLE)}")


class Migration(migrations.Migration):
    dependencies = []
    operations = [migrations.RunPython(create, drop)]
