from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("providers", "0005_extra_headers_hold_no_credentials")]

    operations = [
        migrations.AddField(
            model_name="endpoint",
            name="price_cached_input_per_mtok",
            field=models.DecimalField(
                blank=True,
                decimal_places=4,
                help_text="Prompt-cache hits; blank = the provider lists no cached price "
                "(full input price).",
                max_digits=10,
                null=True,
                verbose_name="USD per 1M cached input tokens",
            ),
        ),
    ]
