"""Sample.slot: the run's slot copied onto each sample (retention's age; PostgreSQL's partition
key in the next migration). Existing samples take their run's slot."""

from django.db import migrations, models

FILL = (
    "UPDATE benchmarks_sample SET slot = "
    "(SELECT slot FROM benchmarks_run WHERE benchmarks_run.id = benchmarks_sample.run_id)"
)


class Migration(migrations.Migration):
    dependencies = [("benchmarks", "0013_run_rollups")]

    operations = [
        migrations.AddField(
            model_name="sample", name="slot", field=models.DateTimeField(null=True)
        ),
        migrations.RunSQL(FILL, migrations.RunSQL.noop),
        migrations.AlterField(model_name="sample", name="slot", field=models.DateTimeField()),
        migrations.RemoveConstraint(model_name="sample", name="sample_unique_index"),
        migrations.AddConstraint(
            model_name="sample",
            constraint=models.UniqueConstraint(
                fields=("run", "index", "slot"), name="sample_unique_index"
            ),
        ),
        migrations.AddIndex(
            model_name="sample", index=models.Index(fields=["slot"], name="sample_slot")
        ),
    ]
