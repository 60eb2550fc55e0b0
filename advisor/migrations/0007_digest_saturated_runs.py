from django.db import migrations
from django.utils import timezone


def digest_everything(apps, schema_editor):
    """Every day digested again: each record gained the run's saturated_count (the advisor marks
    the runs behind a figure whose client was saturated), and a record of the old width would
    misread every field after it."""
    from advisor.digest import rebuild

    rebuild(now=timezone.now())


class Migration(migrations.Migration):
    dependencies = [
        ("advisor", "0006_profile_custom_workload"),
        ("benchmarks", "0030_rollup_saturated_runs"),
    ]

    operations = [migrations.RunPython(digest_everything, migrations.RunPython.noop)]
