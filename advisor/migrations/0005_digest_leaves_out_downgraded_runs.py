from django.db import migrations
from django.utils import timezone


def digest_the_window(apps, schema_editor):
    """The advice's window (14 days) digested again, so it does not go blank after deploying and
    a run served below its lane (`Run.downgraded`) leaves the digest; `manage.py advisor_digest`
    digests older days."""
    from advisor.digest import rebuild

    rebuild(days=15, now=timezone.now())


class Migration(migrations.Migration):
    dependencies = [
        ("advisor", "0004_remove_profile_subscribers"),
        ("benchmarks", "0021_run_lane_and_served_lane"),
    ]

    operations = [migrations.RunPython(digest_the_window, migrations.RunPython.noop)]
