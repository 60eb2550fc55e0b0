"""One way to read a route (an email Subscription or a Channel): does it want this alert event,
or this change of advice? Topics, endpoints / providers / profiles chosen (none = all), severity."""

from __future__ import annotations

from dataclasses import dataclass

from alerts.models import AdviceChange, AlertEvent, Route, Severity, Topic


@dataclass(frozen=True, slots=True)
class Choice:
    """A route's chosen endpoints, providers and profiles (ids), loaded once per pass."""

    endpoints: frozenset[int]
    providers: frozenset[int]
    profiles: frozenset[int]

    @classmethod
    def of(cls, route: Route) -> Choice:
        return cls(
            frozenset(e.id for e in route.endpoints.all()),
            frozenset(p.id for p in route.providers.all()),
            frozenset(p.id for p in route.profiles.all()),
        )


PREFETCH = ("endpoints", "providers", "profiles")


def wants_event(route: Route, choice: Choice, event: AlertEvent, *, any_topic=False) -> bool:
    """any_topic: the daily digest, which carries every alert update of the route's series."""
    alert = event.alert
    if not any_topic and alert.kind not in route.topics:
        return False
    if route.min_severity == Severity.MAJOR and event.severity != Severity.MAJOR:
        return False
    if not choice.endpoints and not choice.providers:
        return True
    endpoint = alert.endpoint
    if endpoint is None:  # a probe alert concerns every endpoint: only "all" routes
        return False
    return endpoint.id in choice.endpoints or endpoint.provider_id in choice.providers


def wants_change(route: Route, choice: Choice, change: AdviceChange) -> bool:
    if Topic.ADVICE not in route.topics:
        return False
    return not choice.profiles or change.profile_id in choice.profiles
