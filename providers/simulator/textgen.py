"""Generated text: plausible tokens, pre-escaped for JSON so the hot path only joins bytes.

The answer cycles through a Python rate-limiter module (what the standard prompt asks for); the
reasoning profile first cycles through planning prose. One "token" is one word, number, run of
punctuation or whitespace run, so the reported usage is exactly the number of pieces sent.
"""

from __future__ import annotations

import json
import re

_CODE = '''"""Rate limiters: fixed window, sliding window and token bucket."""

from __future__ import annotations

import abc
import time
from collections import deque
from dataclasses import dataclass, field


class RateLimiter(abc.ABC):
    """Decides whether a request may pass now; subclasses pick the strategy."""

    def __init__(self, capacity: int, period_s: float, clock=time.monotonic) -> None:
        if capacity < 0:
            raise ValueError("capacity must be zero or more")
        if period_s <= 0:
            raise ValueError("period_s must be positive")
        self.capacity = capacity
        self.period_s = period_s
        self._clock = clock

    @abc.abstractmethod
    def allow(self, cost: int = 1) -> bool:
        """Return True when `cost` units may pass at the current time."""


class FixedWindow(RateLimiter):
    """Counts requests per aligned window of `period_s` seconds."""

    def __init__(self, capacity: int, period_s: float, clock=time.monotonic) -> None:
        super().__init__(capacity, period_s, clock)
        self._window = -1
        self._used = 0

    def allow(self, cost: int = 1) -> bool:
        window = int(self._clock() // self.period_s)
        if window != self._window:
            self._window, self._used = window, 0
        if self._used + cost > self.capacity:
            return False
        self._used += cost
        return True


class SlidingWindow(RateLimiter):
    """Keeps the timestamps of recent requests and drops those older than the period."""

    def __init__(self, capacity: int, period_s: float, clock=time.monotonic) -> None:
        super().__init__(capacity, period_s, clock)
        self._events: deque[float] = deque()

    def allow(self, cost: int = 1) -> bool:
        now = self._clock()
        while self._events and now - self._events[0] >= self.period_s:
            self._events.popleft()
        if len(self._events) + cost > self.capacity:
            return False
        self._events.extend([now] * cost)
        return True


@dataclass
class TokenBucket(RateLimiter):
    """Refills `capacity` tokens every `period_s` seconds, allowing short bursts."""

    capacity: int
    period_s: float
    clock: object = time.monotonic
    _tokens: float = field(init=False)
    _stamp: float = field(init=False)

    def __post_init__(self) -> None:
        super().__init__(self.capacity, self.period_s, self.clock)
        self._tokens = float(self.capacity)
        self._stamp = self._clock()

    def allow(self, cost: int = 1) -> bool:
        now = self._clock()
        if now < self._stamp:
            now = self._stamp  # the clock went backwards: never refill negatively
        rate = self.capacity / self.period_s
        self._tokens = min(self.capacity, self._tokens + (now - self._stamp) * rate)
        self._stamp = now
        if self._tokens < cost:
            return False
        self._tokens -= cost
        return True


# tests/test_rate_limit.py

import pytest


class FakeClock:
    def __init__(self, start: float = 0.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.mark.parametrize("cls", [FixedWindow, SlidingWindow, TokenBucket])
def test_burst_is_capped(cls):
    clock = FakeClock()
    limiter = cls(5, 1.0, clock)
    results = [limiter.allow() for _ in range(8)]
    assert results.count(True) == 5


def test_zero_capacity_bucket_never_allows():
    limiter = TokenBucket(0, 1.0, FakeClock())
    assert not limiter.allow()


def test_clock_skew_does_not_refill():
    clock = FakeClock(100.0)
    bucket = TokenBucket(2, 1.0, clock)
    assert bucket.allow(2)
    clock.now = 50.0
    assert not bucket.allow()


'''

_REASONING = (
    "The user wants a complete Python module with three rate limiting strategies. "
    "First I should define an abstract base class with an allow method and a shared "
    "constructor that validates capacity and period. Then the fixed window counts requests "
    "per aligned window, the sliding window keeps a deque of timestamps, and the token "
    "bucket refills continuously at capacity divided by period. Edge cases to test: a burst "
    "larger than capacity, a clock that moves backwards, and a bucket with zero capacity. "
    "An injectable clock makes the tests deterministic, so every limiter takes a clock "
    "argument. Let me also think about cost greater than one and about floating point drift "
    "in the refill computation before writing the code. "
)

_TOKEN_RE = re.compile(r" ?[A-Za-z_]+| ?[0-9]+| ?[^\sA-Za-z_0-9]+|\s+")


def _pieces(text: str) -> tuple[bytes, ...]:
    """Split text into tokens, each as its JSON string body (escaped, without quotes)."""
    tokens = _TOKEN_RE.findall(text)
    if "".join(tokens) != text:
        raise ValueError("the token pattern must cover every character of the text")
    return tuple(json.dumps(t)[1:-1].encode("ascii") for t in tokens)


class TokenSource:
    """Endless cycle over a fixed list of pre-escaped tokens; `take(n)` joins the next n."""

    __slots__ = ("_doubled", "_size", "_pos")

    def __init__(self, pieces: tuple[bytes, ...]) -> None:
        self._size = len(pieces)
        # Two copies back to back so a slice of up to `size` tokens never has to wrap.
        self._doubled = pieces + pieces
        self._pos = 0

    def take(self, n: int) -> bytes:
        pos = self._pos
        self._pos = (pos + n) % self._size
        return b"".join(self._doubled[pos : pos + n])


CODE_PIECES = _pieces(_CODE)
REASONING_PIECES = _pieces(_REASONING)


def answer_source() -> TokenSource:
    return TokenSource(CODE_PIECES)


def reasoning_source() -> TokenSource:
    return TokenSource(REASONING_PIECES)
