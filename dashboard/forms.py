"""Dashboard forms: the filter bar, the agent-loop calculator and the compare picker."""

from typing import Any

from django import forms
from django.core.exceptions import ValidationError

from benchmarks.buckets import BUCKETS
from benchmarks.models import Workload
from benchmarks.selectors import agent_loop
from benchmarks.selectors.filters import PEAK, WINDOWS, BoardFilters, window_label
from benchmarks.selectors.scope import Vantages, Workloads
from providers.models import Endpoint

from .widgets import FlatChoices, QuickSelect

COMPARE_MIN, COMPARE_MAX = 2, 4


class FilterForm(forms.Form):
    """Renders the filter bar; parsing and validation are BoardFilters.from_query's job."""

    workload = forms.ChoiceField(required=False, widget=QuickSelect)
    concurrency = forms.ChoiceField(required=False, widget=QuickSelect)
    tod = forms.ChoiceField(label="Time of day", required=False, widget=QuickSelect)
    window = forms.ChoiceField(required=False, widget=QuickSelect)
    vantage = forms.ChoiceField(required=False, widget=QuickSelect)
    # Leaderboard only (given `models`): one model at every provider, or rows grouped by model.
    model = forms.ChoiceField(required=False, widget=QuickSelect)
    group = forms.ChoiceField(label="Group", required=False, widget=QuickSelect)

    def __init__(
        self,
        filters: BoardFilters,
        *,
        fields: tuple[str, ...] | None = None,
        models: list[tuple[str, int]] | None = None,
        model: str = "",
        group: str = "",
        workloads: Workloads | None = None,
        vantages: Vantages | None = None,
    ) -> None:
        """workloads, vantages: every one of them, when the page has read them already."""
        super().__init__(
            initial={
                "model": model,
                "group": group,
                "workload": filters.workload or "",
                "concurrency": "" if filters.concurrency is None else str(filters.concurrency),
                "tod": "" if filters.tod_bucket is None else str(filters.tod_bucket),
                "window": window_label(filters.window_hours),
                "vantage": filters.vantage or "",
            }
        )
        named = (
            [(w.slug, w.name) for w in workloads.items]
            if workloads is not None
            else list(Workload.objects.values_list("slug", "name"))
        )
        self.fields["workload"].choices = [("", "Base (default)"), *named]
        self.fields["concurrency"].choices = [("", "Any"), ("1", "1"), ("10", "10"), (PEAK, "Peak")]
        self.fields["tod"].choices = [("", "All day"), *((str(k), v) for k, v in BUCKETS.items())]
        self.fields["window"].choices = [(key, key) for key in WINDOWS]
        every = vantages.items if vantages is not None else Vantages.load().items
        self.fields["vantage"].choices = [(v.slug, v.label) for v in every]
        if models is None:
            del self.fields["model"], self.fields["group"]
        else:
            self.fields["model"].choices = FlatChoices(
                [
                    ("", "All models"),
                    *((name, f"{name} ({count})" if count > 1 else name) for name, count in models),
                ]
            )
            self.fields["group"].choices = [("", "No grouping"), ("model", "By model")]
        for name in list(self.fields):
            if fields is not None and name not in fields:
                del self.fields[name]
        if len(every) < 2:  # nothing to choose: keep the bar short
            self.fields.pop("vantage", None)


class AgentLoopForm(forms.Form):
    calls = forms.IntegerField(
        label="Serial calls",
        min_value=1,
        max_value=agent_loop.MAX_CALLS,
        initial=agent_loop.DEFAULT_CALLS,
    )
    tokens_per_call = forms.IntegerField(
        label="Output tokens per call",
        min_value=1,
        max_value=agent_loop.MAX_TOKENS_PER_CALL,
        initial=agent_loop.DEFAULT_TOKENS_PER_CALL,
    )
    tool_s = forms.FloatField(
        label="Tool time per call (s)",
        min_value=0,
        max_value=agent_loop.MAX_TOOL_S,
        initial=agent_loop.DEFAULT_TOOL_S,
        help_text="Your own work between calls; 0 s shows what the endpoints alone cost.",
    )

    @classmethod
    def from_query(cls, query: Any) -> "AgentLoopForm":
        """Bound to the query when it has any calculator field, else the defaults."""
        if any(name in query for name in cls.base_fields):
            data = {name: query.get(name, "") for name in cls.base_fields}
            for name, field in cls.base_fields.items():
                if data[name] == "":
                    data[name] = field.initial
            return cls(data)
        return cls({name: field.initial for name, field in cls.base_fields.items()})


def parse_compare(query: Any) -> list[Endpoint]:
    """The endpoints named by repeated `e` parameters, in the given order (0 to 4 of them)."""
    slugs = list(dict.fromkeys(s.strip() for s in query.getlist("e") if s.strip()))
    if len(slugs) > COMPARE_MAX:
        raise ValidationError({"e": [f"e: compare at most {COMPARE_MAX} endpoints."]})
    found = {
        ep.slug: ep for ep in Endpoint.objects.select_related("provider").filter(slug__in=slugs)
    }
    missing = [slug for slug in slugs if slug not in found]
    if missing:
        raise ValidationError({"e": [f"e: no endpoint with slug {missing[0]!r}."]})
    return [found[slug] for slug in slugs]
