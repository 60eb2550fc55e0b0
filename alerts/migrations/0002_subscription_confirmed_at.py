"""Subscriptions need the address's consent. Existing subscriptions to the account's own address
(and not unsubscribed by link) count as confirmed; others wait for a confirmation link, which the
subscriptions page offers to send."""

from django.db import migrations, models


def confirm_own_addresses(apps, schema_editor):
    Subscription = apps.get_model("alerts", "Subscription")
    EmailOptOut = apps.get_model("alerts", "EmailOptOut")
    opted_out = {e.lower() for e in EmailOptOut.objects.values_list("email", flat=True)}
    for subscription in Subscription.objects.select_related("user"):
        own = (subscription.user.email or "").strip().lower() == subscription.email.strip().lower()
        if own and subscription.email.strip().lower() not in opted_out:
            subscription.confirmed_at = subscription.created_at
            subscription.save(update_fields=["confirmed_at"])


class Migration(migrations.Migration):

    dependencies = [
        ('alerts', '0001_alerts_and_events'),
    ]

    operations = [
        migrations.AddField(
            model_name='subscription',
            name='confirmed_at',
            field=models.DateTimeField(blank=True, help_text="When the address agreed (its own account's, or a link emailed to it); nothing is sent before.", null=True),
        ),
        migrations.RunPython(confirm_own_addresses, migrations.RunPython.noop),
    ]
