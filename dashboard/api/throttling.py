"""Rate limits that read their rates at request time, so settings overrides take effect."""

from rest_framework.settings import api_settings
from rest_framework.throttling import AnonRateThrottle, UserRateThrottle


class AnonThrottle(AnonRateThrottle):
    """Per client IP for anonymous readers (TOKSPEED_THROTTLE_ANON, default 120/min)."""

    def get_rate(self) -> str | None:
        return api_settings.DEFAULT_THROTTLE_RATES.get(self.scope)


class UserThrottle(UserRateThrottle):
    """Per user for authenticated callers (TOKSPEED_THROTTLE_USER, default 1200/min)."""

    def get_rate(self) -> str | None:
        return api_settings.DEFAULT_THROTTLE_RATES.get(self.scope)
