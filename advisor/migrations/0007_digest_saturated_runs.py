from django.db import migrations


def digest_everything(apps, schema_editor):
    """Moved to 0008_day_digest: the digest is built by today's code, which writes the
    DayDigest table that migration makes."""


class Migration(migrations.Migration):
    dependencies = [
        ("advisor", "0006_profile_custom_workload"),
        ("benchmarks", "0030_rollup_saturated_runs"),
    ]

    operations = [migrations.RunPython(digest_everything, migrations.RunPython.noop)]
