"""The runs list's filter bar (runs and exports pages): dates for people, the API's filters inside.

The page takes whole UTC days (`from`, `to`, both inclusive) because a date picker is what a
person uses; they become the API's `since`/`until` (RunFilter, dashboard/filters.py), so the
pages, the API and the exports select runs by one definition. The pages take `since`/`until`
(ISO times, kept in hidden fields) too, as the API takes `from`/`to`: one pair works everywhere.
"""

from datetime import UTC, date, datetime, time, timedelta

from django import forms
from django.db.models import QuerySet
from django.http import QueryDict

from benchmarks.models import Run, RunStatus, Vantage, Workload
from providers.models import Endpoint, Provider

from .filters import DayOrTimeField, RunFilter
from .widgets import FlatChoices, QuickSelect

FILTER_NAMES = ("endpoint", "provider", "workload", "vantage", "status", "from", "to")
TIME_NAMES = ("since", "until")  # the API's spelling, accepted by the pages too


class DateInput(forms.DateInput):
    input_type = "date"


class RunListForm(forms.Form):
    # Every endpoint and provider: written without a template per option (widgets.py).
    endpoint = forms.ChoiceField(required=False, widget=QuickSelect)
    provider = forms.ChoiceField(required=False, widget=QuickSelect)
    workload = forms.ChoiceField(required=False, widget=QuickSelect)
    vantage = forms.ChoiceField(required=False, widget=QuickSelect)
    status = forms.ChoiceField(
        required=False, choices=[("", "Any"), *RunStatus.choices], widget=QuickSelect
    )
    since = DayOrTimeField(required=False, widget=forms.HiddenInput)
    until = DayOrTimeField(required=False, widget=forms.HiddenInput)
    # "from" is a Python keyword: the field is declared below under its query name.

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        # Flat pairs of text taken as they are (widgets.FlatChoices): a list of every endpoint
        # was normalised pair by pair by each field and again by its widget (~4 ms a page at
        # 400 endpoints).
        self.fields["endpoint"].choices = FlatChoices(
            [("", "Any"), *Endpoint.objects.order_by("slug").values_list("slug", "slug")]
        )
        self.fields["provider"].choices = FlatChoices(
            [("", "Any"), *Provider.objects.order_by("slug").values_list("slug", "name")]
        )
        self.fields["workload"].choices = FlatChoices(
            [("", "Any"), *Workload.objects.order_by("slug").values_list("slug", "name")]
        )
        self.fields["vantage"].choices = FlatChoices(
            [
                ("", "Any"),
                *Vantage.objects.order_by("-is_default", "slug").values_list("slug", "slug"),
            ]
        )

    def clean(self) -> dict:
        data = super().clean()
        start, end = data.get("from"), data.get("to")
        if start and end and start > end:
            self.add_error("to", "Must be the same day as “from” or later.")
        if end and end >= date.max:
            self.add_error("to", f"Give a day before {date.max.isoformat()}.")
        since, until = data.get("since"), data.get("until")
        if since and until and since >= until:
            self.add_error(None, "until must be later than since.")
        return data

    def api_filters(self) -> dict[str, str]:
        """The valid form as RunFilter's query: slugs as given, days as an ISO time range."""
        data = self.cleaned_data
        query = {name: data[name] for name in FILTER_NAMES[:5] if data.get(name)}
        if data.get("from"):
            query["since"] = _midnight(data["from"]).isoformat()
        if data.get("to"):
            query["until"] = _midnight(data["to"] + timedelta(days=1)).isoformat()
        # An ISO time is the narrower bound where both spellings are given.
        if data.get("since"):
            query["since"] = max(data["since"], _midnight(data.get("from") or date.min)).isoformat()
        if data.get("until"):
            end = data["until"]
            if data.get("to"):
                end = min(end, _midnight(data["to"] + timedelta(days=1)))
            query["until"] = end.isoformat()
        return query

    def page_filters(self) -> dict[str, str]:
        """The valid form as this page's query (for links that keep the filters)."""
        data = self.cleaned_data
        query = {name: data[name] for name in FILTER_NAMES[:5] if data.get(name)}
        for name in ("from", "to", *TIME_NAMES):
            if data.get(name):
                query[name] = data[name].isoformat()
        return query


RunListForm.base_fields["from"] = forms.DateField(
    required=False, label="From (UTC)", widget=DateInput
)
RunListForm.base_fields["to"] = forms.DateField(required=False, label="To (UTC)", widget=DateInput)


def _midnight(day: date) -> datetime:
    return datetime.combine(day, time(), tzinfo=UTC)


def matching_runs(api_filters: dict[str, str]) -> QuerySet[Run]:
    """Runs matching the API's filters (already checked by the form, so always valid)."""
    return RunFilter(data=api_filters, queryset=Run.objects.all()).qs


def bound_form(query: QueryDict) -> RunListForm:
    return RunListForm({name: query.get(name, "") for name in (*FILTER_NAMES, *TIME_NAMES)})
