from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("alerts", "0004_alert_frozen_baseline")]

    operations = [
        migrations.AddField(
            model_name="alert",
            name="opened_on",
            field=models.JSONField(
                blank=True,
                help_text="What the alert opened on (alerts.detector.Opened): the change it was "
                "sure of and, for a one-slot slowdown, its time-of-day bucket; it resolves only "
                "when the recent runs are surely back rather than still this much worse.",
                null=True,
            ),
        ),
    ]
