"""The "operators" group: its members may trigger runs and act on alerts (dashboard/roles.py)."""

from django.db import migrations

NAME = "operators"


def create(apps, schema_editor):
    apps.get_model("auth", "Group").objects.get_or_create(name=NAME)


def remove(apps, schema_editor):
    apps.get_model("auth", "Group").objects.filter(name=NAME).delete()


class Migration(migrations.Migration):
    dependencies = [("auth", "0012_alter_user_first_name_max_length"), ("dashboard", "0001_cache_table")]
    operations = [migrations.RunPython(create, remove)]
