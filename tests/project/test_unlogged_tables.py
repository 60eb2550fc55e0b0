"""Which tables a database crash may empty: only the cache and the throttle counters.

Their writes (one a request, one a cold advice) would otherwise each wait for a disk flush;
every table that holds a measurement, a setting or an alert stays logged, so a crash of the
database server loses nothing measured (docs/operations.md, "Limits")."""

import pytest
from django.db import connection

pytestmark = pytest.mark.django_db


def test_only_the_cache_and_the_counters_are_emptied_by_a_crash():
    if connection.vendor != "postgresql":
        pytest.skip("UNLOGGED tables are PostgreSQL's")
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT relname FROM pg_class JOIN pg_namespace n ON n.oid = relnamespace "
            "WHERE nspname = current_schema() AND relkind IN ('r', 'p') AND relpersistence = 'u'"
        )
        unlogged = {name for (name,) in cursor.fetchall()}
        cursor.execute(
            "SELECT count(*) FROM pg_class JOIN pg_namespace n ON n.oid = relnamespace "
            "WHERE nspname = current_schema() AND relkind IN ('r', 'p') AND relpersistence = 'p'"
        )
        (logged,) = cursor.fetchone()
    assert unlogged == {"tokspeed_cache", "tokspeed_throttle"}
    assert logged > 20, "the measurement tables should be ordinary, logged tables"
