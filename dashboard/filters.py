"""Run filters shared by the runs list and the CSV exports (one definition, same behaviour).

Two spellings of one time range, both accepted everywhere (API, CSV, pages): `since`/`until`
(ISO 8601 times, until exclusive) and `from`/`to` (whole UTC days as the pages' date pickers
give them, both inclusive, or ISO times).
"""

from datetime import UTC, date, datetime, time, timedelta

import django_filters
from django import forms
from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from django_filters.fields import IsoDateTimeField

from benchmarks.models import Run, RunStatus, Vantage, Workload
from providers.models import Endpoint, Provider


class SlugChoiceFilter(django_filters.ModelChoiceFilter):
    """Filter by a related object's slug; an unknown slug is a 400 naming the parameter."""

    def __init__(self, *, queryset: QuerySet, **kwargs) -> None:
        super().__init__(queryset=queryset, to_field_name="slug", **kwargs)


class DayOrTimeField(forms.Field):
    """A day (2026-01-31: its midnight UTC, or the next day's with end_of_day) or an ISO time."""

    def __init__(self, *, end_of_day: bool = False, **kwargs: object) -> None:
        self.end_of_day = end_of_day
        super().__init__(**kwargs)

    def to_python(self, value: object) -> datetime | None:
        text = str(value or "").strip()
        if not text:
            return None
        if len(text) == len("2026-01-31"):
            try:
                day = date.fromisoformat(text)
            except ValueError:
                raise ValidationError("Give a day (2026-01-31) or an ISO 8601 time.") from None
            if self.end_of_day:
                if day >= date.max:
                    raise ValidationError(f"Give a day before {date.max.isoformat()}.")
                day += timedelta(days=1)
            return datetime.combine(day, time(), tzinfo=UTC)
        return IsoDateTimeField().clean(text)


class DayOrTimeFilter(django_filters.Filter):
    field_class = DayOrTimeField


class RunFilterForm(forms.Form):
    def clean(self) -> dict:
        data = super().clean()
        for name in ("since", "until"):
            if name in self.data and not str(self.data[name]).strip():
                self.add_error(name, "Give an ISO 8601 time, e.g. 2026-01-31T00:00:00Z.")
        since, until = data.get("since"), data.get("until")
        if since and until and since >= until:
            self.add_error("until", "Must be later than since.")
        start, end = data.get("from"), data.get("to")
        if start and end and start >= end:
            self.add_error("to", "Must be the same day as from or later.")
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


# "from" is a Python keyword: the filters are declared under their query names here.
RunFilter.base_filters["from"] = DayOrTimeFilter(
    field_name="slot",
    lookup_expr="gte",
    help_text="Runs from this UTC day (2026-01-31) or ISO 8601 time on; the same as since.",
)
RunFilter.base_filters["to"] = DayOrTimeFilter(
    field_name="slot",
    lookup_expr="lt",
    end_of_day=True,
    help_text="Runs up to the end of this UTC day (inclusive), or before this ISO 8601 time.",
)
