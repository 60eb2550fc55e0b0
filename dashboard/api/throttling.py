"""Rate limits that read their rates at request time, so settings overrides take effect.

Counters live in the default cache (Redis or the database, see settings), which every web
process shares: two gunicorn workers do not each allow the full rate.
"""

from rest_framework.settings import api_settings
from rest_framework.throttling import AnonRateThrottle, UserRateThrottle


class AnonThrottle(AnonRateThrottle):
    """Per client IP for anonymous readers (TOKSPEED_THROTTLE_ANON, default 120/min)."""

    def get_rate(self) -> str | None:
        return api_settings.DEFAULT_THROTTLE_RATES.get(self.scope)


class UserThrottle(UserRateThrottle):
    """Per user for authenticated callers (TOKSPEED_THROTTLE_USER, default 1200/min).

    Anonymous callers are AnonThrottle's alone: DRF's user throttle would also count them by
    address, capping a public dashboard's readers at the user rate whatever the anon one says.
    """

    def get_rate(self) -> str | None:
        return api_settings.DEFAULT_THROTTLE_RATES.get(self.scope)

    def get_cache_key(self, request, view) -> str | None:
        if not (request.user and request.user.is_authenticated):
            return None
        return super().get_cache_key(request, view)
