"""Run filters shared by the runs list and the CSV exports (one definition, same behaviour)."""

import django_filters
from django import forms
from django.db.models import QuerySet

from benchmarks.models import Run, RunStatus, Vantage, Workload
from providers.models import Endpoint, Provider


class SlugChoiceFilter(django_filters.ModelChoiceFilter):
    """Filter by a related object's slug; an unknown slug is a 400 naming the parameter."""

    def __init__(self, *, queryset: QuerySet, **kwargs) -> None:
        super().__init__(queryset=queryset, to_field_name="slug", **kwargs)


class RunFilterForm(forms.Form):
    def clean(self) -> dict:
        data = super().clean()
        for name in ("since", "until"):
            if name in self.data and not str(self.data[name]).strip():
                self.add_error(name, "Give an ISO 8601 time, e.g. 2026-01-31T00:00:00Z.")
        since, until = data.get("since"), data.get("until")
        if since and until and since >= until:
            self.add_error("until", "Must be later than since.")
        return data


class RunFilter(django_filters.FilterSet):
    endpoint = SlugChoiceFilter(queryset=Endpoint.objects.all(), help_text="Endpoint slug.")
    provider = SlugChoiceFilter(
        field_name="endpoint__provider", queryset=Provider.objects.all(), help_text="Provider slug."
    )
    workload = SlugChoiceFilter(queryset=Workload.objects.all(), help_text="Workload slug.")
    vantage = SlugChoiceFilter(queryset=Vantage.objects.all(), help_text="Vantage slug.")
    status = django_filters.ChoiceFilter(choices=RunStatus.choices)
    since = django_filters.IsoDateTimeFilter(
        field_name="slot",
        lookup_expr="gte",
        help_text="Runs whose slot is at or after this ISO 8601 time (UTC when no offset).",
    )
    until = django_filters.IsoDateTimeFilter(
        field_name="slot",
        lookup_expr="lt",
        help_text="Runs whose slot is before this ISO 8601 time (UTC when no offset).",
    )

    class Meta:
        model = Run
        fields = ["endpoint", "provider", "workload", "vantage", "status", "since", "until"]
        form = RunFilterForm
