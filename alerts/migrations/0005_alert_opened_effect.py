from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("alerts", "0004_alert_frozen_baseline")]

    operations = [
        migrations.AddField(
            model_name="alert",
            name="opened_effect",
            field=models.FloatField(
                blank=True,
                help_text="The change the alert was sure of when it opened (worse-oriented log "
                "shift: its arm's estimate less one standard error); it resolves only when the "
                "recent runs are surely back rather than still this much worse.",
                null=True,
            ),
        ),
    ]
