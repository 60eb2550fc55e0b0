"""The exports page's request form: what to export (runs or their samples), how, which runs."""

from django import forms

from benchmarks.models import Export

from .run_filters import RunListForm


class ExportRequestForm(RunListForm):
    kind = forms.ChoiceField(
        label="What",
        choices=[("runs", "Runs"), ("samples", "Their samples (every request)")],
        initial="runs",
    )
    file_format = forms.ChoiceField(label="Format", choices=Export.FORMATS, initial="csv.gz")

    field_order = ["kind", "file_format"]
