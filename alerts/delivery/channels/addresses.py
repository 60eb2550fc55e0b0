"""What apprise URL an address makes: a light module, so that forms and the admin can check an
address without importing apprise, the message builders and the advisor's feeds."""

from __future__ import annotations

from alerts.models import Service


def pager_probe_url(service: str, address: str) -> str:
    """The apprise URL an address makes, for checking it (no message, no traffic)."""
    if service == Service.PAGERDUTY and "://" not in address:
        return f"pagerduty://{address}@tokspeed/tokspeed/alerts"
    if service == Service.OPSGENIE and "://" not in address:
        return f"opsgenie://{address}"
    return address
