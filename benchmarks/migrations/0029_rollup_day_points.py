"""rollup_day_points: an endpoint's day rollups, index-only, for a long window's history charts."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("benchmarks", "0028_workload_reasoning_effort_values"),
        ("providers", "0009_demand_time_zone"),
    ]

    operations = [
        migrations.AddIndex(
            model_name="runrollup",
            index=models.Index(
                condition=models.Q(("span", "day")),
                fields=["endpoint", "workload", "vantage", "day"],
                include=("runs", "ok_count", "error_count", "packed"),
                name="rollup_day_points",
            ),
        ),
    ]
