"""Migration tests' one way to move the test database between migration states."""

from django.db import connection
from django.db.migrations.executor import MigrationExecutor


def migrate(targets):
    """Migrate to `targets` (app, migration) pairs; the apps as that state has them."""
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


def migrate_to_latest():
    """Every app to its newest migration (what a test leaves the database at)."""
    return migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())
