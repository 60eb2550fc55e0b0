"""Rate limits that read their rates at request time, so settings overrides take effect.

Counters live where every web process shares them (two gunicorn workers do not each allow the
full rate): in Redis when the cache is Redis (see settings), else in the database's own counter
table (dashboard.models.ThrottleCount), one statement a request.
"""

import math
import time

from django.core.cache import caches
from django.core.cache.backends.redis import RedisCache
from django.db import connections
from rest_framework.settings import api_settings
from rest_framework.throttling import AnonRateThrottle, SimpleRateThrottle, UserRateThrottle

from ..models import ThrottleCount

# One statement counts a request in and returns its count (PostgreSQL and SQLite alike).
_UPSERT = (
    "INSERT INTO tokspeed_throttle (key, count, expires) VALUES (%s, 1, %s) "
    "ON CONFLICT (key) DO UPDATE SET count = tokspeed_throttle.count + 1 RETURNING count"
)
if ThrottleCount._meta.db_table != "tokspeed_throttle":
    raise RuntimeError("the throttle's statements name another table")


class AtomicCount(SimpleRateThrottle):
    """A fixed-window counter incremented atomically, so parallel requests cannot all read the
    same count and all pass (DRF's history list is read, then written: 8 parallel clients got
    1,496 requests past a limit of 1,500 per window).

    Redis: `SET NX` with the window as expiry, then `INCR` (one atomic command each). No
    Redis: one upsert of the window's row on the default database (atomic by the row's lock);
    rows of ended windows are deleted by a beat task (forget_ended_windows).
    """

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
        cache = caches["default"]
        if isinstance(cache, RedisCache):
            cache.add(key, 0, timeout=int(self.duration) + 1)
            return cache.incr(key)
        with connections["default"].cursor() as cursor:
            cursor.execute(_UPSERT, [key, self.window_ends])
            (count,) = cursor.fetchone()
        return count

    def wait(self) -> float:
        return max(math.ceil(self.window_ends - self.now), 1)


def forget_ended_windows(now: float | None = None) -> int:
    """Delete the counters of windows that have ended (Unix time `now`); rows deleted."""
    ended = ThrottleCount.objects.filter(expires__lt=time.time() if now is None else now)
    return ended.delete()[0]


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
