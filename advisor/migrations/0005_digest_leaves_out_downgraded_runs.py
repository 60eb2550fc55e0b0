from django.db import migrations


def digest_the_window(apps, schema_editor):
    """Moved to 0008_day_digest: the digest is built by today's code, which writes the
    DayDigest table that migration makes."""


class Migration(migrations.Migration):
    dependencies = [
        ("advisor", "0004_remove_profile_subscribers"),
        ("benchmarks", "0021_run_lane_and_served_lane"),
    ]

    operations = [migrations.RunPython(digest_the_window, migrations.RunPython.noop)]
