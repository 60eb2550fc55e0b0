"""Rate limits that read their rates at request time, so settings overrides take effect.

Counters live in the default cache (Redis or the database, see settings), which every web
process shares: two gunicorn workers do not each allow the full rate.
"""

import math

from django.core.cache import cache as default_cache
from django.db import connection, transaction
from rest_framework.settings import api_settings
from rest_framework.throttling import AnonRateThrottle, SimpleRateThrottle, UserRateThrottle


class AtomicCount(SimpleRateThrottle):
    """A fixed-window counter incremented atomically, so parallel requests cannot all read the
    same count and all pass (DRF's history list is read, then written: 8 parallel clients got
    1,496 requests past a limit of 1,500 per window).

    Redis: `SET NX` with the window as expiry, then `INCR` (one atomic command each). The
    database cache (no Redis): the same under a transaction-scoped advisory lock on the key.
    """

    cache = default_cache

    def allow_request(self, request, view) -> bool:
        if self.rate is None:
            return True
        self.key = self.get_cache_key(request, view)
        if self.key is None:
            return True
        self.now = self.timer()
        window = int(self.now // self.duration)
        self.window_ends = (window + 1) * self.duration
        count = self._increment(f"{self.key}:{window}")
        return count <= self.num_requests

    def _increment(self, key: str) -> int:
        ttl = int(self.duration) + 1
        if "redis" in type(self.cache).__module__:
            self.cache.add(key, 0, timeout=ttl)
            return self.cache.incr(key)
        with transaction.atomic(using="default"):
            if connection.vendor == "postgresql":
                with connection.cursor() as cursor:
                    cursor.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", [key])
            count = (self.cache.get(key) or 0) + 1
            self.cache.set(key, count, timeout=ttl)
            return count

    def wait(self) -> float:
        return max(math.ceil(self.window_ends - self.now), 1)


class AnonThrottle(AtomicCount, AnonRateThrottle):
    """Per client IP for anonymous readers (TOKSPEED_THROTTLE_ANON, default 120/min)."""

    def get_rate(self) -> str | None:
        return api_settings.DEFAULT_THROTTLE_RATES.get(self.scope)


class UserThrottle(AtomicCount, UserRateThrottle):
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
