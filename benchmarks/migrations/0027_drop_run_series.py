"""run_series had the key of run_endpoint_board (0026) without its columns: one index serves both."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("benchmarks", "0026_run_endpoint_board"),
    ]

    operations = [
        migrations.RemoveIndex(
            model_name="run",
            name="run_series",
        ),
    ]
