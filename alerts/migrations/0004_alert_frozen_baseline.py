from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("alerts", "0003_advice_changed")]

    operations = [
        migrations.AddField(
            model_name="alert",
            name="frozen_baseline",
            field=models.JSONField(
                blank=True,
                help_text="The baseline model the alert opened against "
                "(alerts.baseline.Baseline); tested against until the series is back, so a "
                "lasting regression never resolves by being absorbed into a sliding baseline.",
                null=True,
            ),
        ),
    ]
