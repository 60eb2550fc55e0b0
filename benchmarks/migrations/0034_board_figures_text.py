"""BoardFigures' figures as JSON text and their figures_text in a column of its own: the rows
already written are converted (the same values), not dropped (boards would merge until the
next daily write)."""

import json

from django.db import migrations, models


def split_texts(apps, schema_editor):
    """Each row's last element (its figures_text) into `text`, the rest stays in `figures`."""
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(
            "UPDATE benchmarks_boardfigures SET text = figures ->> -1, figures = figures - -1 "
            "WHERE jsonb_typeof(figures -> -1) = 'string'"
        )
        return
    BoardFigures = apps.get_model("benchmarks", "BoardFigures")
    for row in BoardFigures.objects.iterator():
        if row.figures and isinstance(row.figures[-1], str):
            row.text, row.figures = row.figures[-1], row.figures[:-1]
            row.save(update_fields=["text", "figures"])


def join_texts(apps, schema_editor):
    BoardFigures = apps.get_model("benchmarks", "BoardFigures")
    for row in BoardFigures.objects.iterator():
        figures = json.loads(row.figures)
        row.figures = json.dumps([*figures, row.text] if row.text else figures)
        row.save(update_fields=["figures"])


class Migration(migrations.Migration):
    dependencies = [("benchmarks", "0033_window_figures")]

    operations = [
        migrations.AddField(
            model_name="boardfigures", name="text", field=models.TextField(default="")
        ),
        migrations.RunPython(split_texts, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="boardfigures", name="figures", field=models.TextField(default="[]")
        ),
        migrations.RunPython(migrations.RunPython.noop, join_texts),
    ]
