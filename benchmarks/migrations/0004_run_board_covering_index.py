"""Make the run_board index covering: the leaderboard's window aggregates become index-only
scans instead of reading one wide heap row (with its summary JSON) per run."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("benchmarks", "0003_run_claims_and_attempts"),
        ("providers", "0002_endpoint_price_note"),
    ]

    operations = [
        migrations.RemoveIndex(model_name="run", name="run_board"),
        migrations.AddIndex(
            model_name="run",
            index=models.Index(
                fields=["workload", "vantage", "-slot"],
                include=(
                    "endpoint",
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
                ),
                name="run_board",
            ),
        ),
    ]
