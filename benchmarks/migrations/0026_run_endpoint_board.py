"""run_endpoint_board: the board's run columns per endpoint (compare page, endpoint history)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("benchmarks", "0025_windowrollup_near"),
        ("providers", "0009_demand_time_zone"),
    ]

    operations = [
        migrations.AddIndex(
            model_name="run",
            index=models.Index(
                fields=["endpoint", "workload", "vantage", "-slot"],
                include=(
                    "id",
                    "status",
                    "tod_bucket",
                    "concurrency",
                    "ok_count",
                    "error_count",
                    "input_tokens",
                    "output_tokens_p50",
                    "ttft_p50_ms",
                    "decode_tps_p50",
                    "e2e_p50_ms",
                    "throughput_tps",
                    "downgraded",
                ),
                name="run_endpoint_board",
            ),
        ),
    ]
