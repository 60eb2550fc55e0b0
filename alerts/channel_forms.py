"""The channel form, used by the admin and the channels page: the address is write-only (a
password field, never rendered back), checked by the library that will use it, then encrypted."""

from __future__ import annotations

from urllib.parse import urlsplit

from django import forms

from alerts.channel_models import refused_topics
from alerts.delivery.channels import secrets
from alerts.delivery.channels.addresses import pager_probe_url
from alerts.models import Channel, Service
from alerts.routes import CHANNEL_TOPICS
from providers.models import Endpoint

ADDRESS_HELP = {
    Service.SLACK: "the incoming-webhook URL (https://hooks.slack.com/services/…)",
    Service.TEAMS: "the workflow's HTTP trigger URL (Teams › Workflows › 'Post to a channel "
    "when a webhook request is received')",
    Service.DISCORD: "the webhook URL (https://discord.com/api/webhooks/…)",
    Service.PAGERDUTY: "the Events API v2 integration (routing) key",
    Service.OPSGENIE: "the API integration key",
    Service.NTFY: "the topic URL (https://ntfy.sh/your-topic)",
    Service.WEBHOOK: "the URL tokspeed POSTs signed JSON to",
    Service.ROUTER: "the URL tokspeed POSTs the new feed to",
}


class ChannelForm(forms.ModelForm):
    address = forms.CharField(
        required=False,
        strip=True,
        max_length=2000,
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "off", "size": 60}),
        help_text="Webhook URL, routing key or API key; stored encrypted and never shown "
        "again. Leave empty to keep the stored one.",
    )
    topics = forms.MultipleChoiceField(
        label="Receives", choices=CHANNEL_TOPICS, widget=forms.CheckboxSelectMultiple
    )

    class Meta:
        model = Channel
        fields = [
            "name",
            "service",
            "address",
            "secret_env",
            "topics",
            "providers",
            "endpoints",
            "profiles",
            "min_severity",
            "feed",
            "active",
        ]
        widgets = {
            "providers": forms.CheckboxSelectMultiple,
            "endpoints": forms.CheckboxSelectMultiple,
            "profiles": forms.CheckboxSelectMultiple,
        }

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["endpoints"].queryset = Endpoint.objects.select_related("provider")
        self.new_signing_secret = ""

    def clean_secret_env(self) -> str:
        name = self.cleaned_data.get("secret_env", "").strip()
        if name and not name.replace("_", "").isalnum():
            raise forms.ValidationError("An environment variable name: letters, digits and _.")
        return name

    def clean(self) -> dict:
        data = super().clean()
        service = data.get("service")
        address = data.get("address", "")
        if "address" in self.errors:
            return data  # e.g. a NUL byte, refused by the field itself
        refused = refused_topics(service or "", data.get("topics") or [])
        if refused:
            self.add_error("topics", refused)
        stored = self.instance.pk and self.instance.secret_encrypted
        if not address and not data.get("secret_env") and not stored:
            self.add_error("address", f"Give {ADDRESS_HELP.get(service, 'the address')}.")
        elif address and service:
            problem = check_address(service, address)
            if problem:
                self.add_error("address", problem)
        return data

    def save(self, commit: bool = True) -> Channel:
        channel = super().save(commit=False)
        address = self.cleaned_data.get("address")
        if address:
            secrets.set_address(channel, address)
        elif self.cleaned_data.get("secret_env"):
            channel.secret_encrypted = ""
            channel.secret_hint = f"${self.cleaned_data['secret_env']}"
        if channel.signed and not channel.signing_secret_encrypted:
            self.new_signing_secret = secrets.new_signing_secret(channel)
        if commit:
            channel.save()
            self.save_m2m()
        return channel


def check_address(service: str, address: str) -> str:
    """Why the address cannot work for the service ('' when it can)."""
    if service in (Service.WEBHOOK, Service.ROUTER):
        parts = urlsplit(address)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            return "Give an http(s) URL."
        return ""
    import apprise  # its hundred service plugins load only when an address is checked

    url = pager_probe_url(service, address)
    if apprise.Apprise.instantiate(url) is None:
        return f"This is not {ADDRESS_HELP[service]}."
    return ""
