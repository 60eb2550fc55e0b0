"""Forms of the alert pages: list filters, an action's note, a subscription."""

from __future__ import annotations

from django import forms

from alerts.delivery.recipients import normal
from alerts.models import Kind, Metric, Severity, Subscription, Topic
from alerts.pages.selectors import VIEW_LABELS
from alerts.routes import alert_topics
from benchmarks.models import Vantage
from providers.models import Endpoint, Provider

VIEW_CHOICES = list(VIEW_LABELS.items())


def _choices(pairs, blank: str = "Any") -> list[tuple[str, str]]:
    return [("", blank), *pairs]


class AlertFilterForm(forms.Form):
    """The alerts page's filters; values are slugs, so a link to a filtered view reads well."""

    view = forms.ChoiceField(
        label="Show",
        required=False,
        choices=VIEW_CHOICES,
    )
    kind = forms.ChoiceField(required=False, choices=_choices(Kind.choices))
    metric = forms.ChoiceField(required=False, choices=_choices(Metric.choices))
    severity = forms.ChoiceField(required=False, choices=_choices(Severity.choices))
    provider = forms.ChoiceField(required=False)
    endpoint = forms.ChoiceField(required=False)
    vantage = forms.ChoiceField(required=False)

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["provider"].choices = _choices(Provider.objects.values_list("slug", "name"))
        self.fields["endpoint"].choices = _choices(
            (e.slug, e.label) for e in Endpoint.objects.select_related("provider")
        )
        self.fields["vantage"].choices = _choices(Vantage.objects.values_list("slug", "label"))

    def filters(self) -> dict[str, str]:
        data = {name: value for name, value in self.cleaned_data.items() if value}
        data.setdefault("view", "active")
        return data


class ActionForm(forms.Form):
    note = forms.CharField(
        required=False,
        max_length=2000,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="Optional: why (shown in the alert's history).",
    )


class SubscriptionForm(forms.ModelForm):
    topics = forms.MultipleChoiceField(
        label="Receives",
        choices=[(t.value, t.label) for t in Topic if t != Topic.DIGEST],
        widget=forms.CheckboxSelectMultiple,
        required=False,
        initial=alert_topics,
        help_text="None chosen: every alert. “The advice changed” is told at once.",
    )

    class Meta:
        model = Subscription
        fields = [
            "email",
            "topics",
            "providers",
            "endpoints",
            "profiles",
            "min_severity",
            "delivery",
            "active",
        ]
        widgets = {
            "providers": forms.CheckboxSelectMultiple,
            "endpoints": forms.CheckboxSelectMultiple,
            "profiles": forms.CheckboxSelectMultiple,
        }
        help_texts = {
            "providers": "Every endpoint of these providers.",
            "endpoints": "These endpoints. Choose neither providers nor endpoints for all.",
        }

    def clean_topics(self) -> list[str]:
        return self.cleaned_data.get("topics") or alert_topics()

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["endpoints"].queryset = Endpoint.objects.select_related("provider")
        self.fields["endpoints"].label_from_instance = endpoint_choice_label
        self.fields["providers"].label_from_instance = provider_choice_label

    def clean_email(self) -> str:
        return normal(self.cleaned_data["email"])


def endpoint_choice_label(endpoint: Endpoint) -> str:
    """The endpoint's name, marked when it is not measured (no alert can come from it)."""
    why = endpoint.why_disabled
    if why == "no_key":
        return f"{endpoint.label} — not measured: {endpoint.provider.api_key_env} is not set"
    if why:
        return f"{endpoint.label} — not measured: disabled in the admin"
    return endpoint.label


def provider_choice_label(provider) -> str:  # noqa: ANN001 - a Provider
    if provider.enabled:
        return str(provider)
    if not provider.key_configured:
        return f"{provider} — not measured: {provider.api_key_env} is not set"
    return f"{provider} — not measured: disabled in the admin"
