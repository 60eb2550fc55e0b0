"""Extra headers never hold a credential: validated in the admin and the API alike, and any
credential the admin stored before this check is removed (the key belongs in api_key_env)."""

import providers.credentials
from django.db import migrations, models


def drop_stored_credentials(apps, schema_editor):
    Provider = apps.get_model("providers", "Provider")
    for provider in Provider.objects.exclude(extra_headers={}):
        kept = providers.credentials.without_credentials(provider.extra_headers)
        if kept != provider.extra_headers:
            Provider.objects.filter(pk=provider.pk).update(extra_headers=kept)


class Migration(migrations.Migration):

    dependencies = [
        ('providers', '0004_cloud_protocols'),
    ]

    operations = [
        migrations.AlterField(
            model_name='provider',
            name='extra_headers',
            field=models.JSONField(blank=True, default=dict, help_text='Harmless request headers (a version, a beta flag); never a key or a cookie.', validators=[providers.credentials.validate_extra_headers]),
        ),
        migrations.RunPython(drop_stored_credentials, migrations.RunPython.noop),
    ]
