"""Every value a provider sent, bounded and made storable before it leaves the measurement.

Called once per request, after the stream has ended (Recorder.result): nothing here runs between
a byte arriving and its timestamp. A value no provider could honestly send (a token count of
three billion, a negative one) makes the sample a `stream_broken` error whose message starts
with "malformed", with every timing measured before it kept; text is made valid UTF-8 without
NUL bytes (PostgreSQL refuses both) and cut to its column's length.
"""

from __future__ import annotations

import math

from .measurement import SAMPLE_FIELDS, Measurement

# No request streams or reads more tokens than this; a count above it is the provider's error.
MAX_TOKEN_COUNT = 100_000_000
# Largest value of a PositiveIntegerField / PositiveSmallIntegerField column.
_MAX_INT = 2**31 - 1
_MAX_HTTP_STATUS = 999
_MAX_MS = 1e9  # eleven days: no duration a provider reports is longer
# A Retry-After longer than a day is not advice a scheduler can follow.
MAX_RETRY_AFTER_S = 86_400.0
# Character limits of the Sample columns filled from the wire (benchmarks.models.Sample).
TEXT_LIMITS = {"finish_reason": 40, "connect_address": 64, "error_message": 1000}
USAGE_FIELDS = ("input_tokens", "output_tokens", "reasoning_tokens", "cached_tokens")
MALFORMED = "malformed"


def storable_text(text: str) -> str:
    """`text` as valid Unicode without NUL: a surrogate pair split across two JSON strings
    (`"\\ud83d"` then `"\\ude00"`) joins into its character, a lone half becomes U+FFFD."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text.replace("\x00", "\ufffd") if "\x00" in text else text


def bad_usage(usage: dict[str, int]) -> str:
    """Why the provider's usage block cannot be a token count ("" when it can)."""
    for name in USAGE_FIELDS:
        value = usage.get(name)
        if value is not None and not 0 <= value <= MAX_TOKEN_COUNT:
            limit = f"0–{MAX_TOKEN_COUNT:,}"
            return f"{MALFORMED} usage: {name} = {value} is not a token count ({limit})"
    return ""


def bounded_number(value: float | None, *, high: float) -> float | None:
    """A finite figure in 0…high, else None (the wire said something that is not one)."""
    if value is None or not math.isfinite(value) or not 0 <= value <= high:
        return None
    return value


def bounded_int(value: int | None, *, high: int = _MAX_INT) -> int | None:
    if value is None or not 0 <= value <= high:
        return None
    return value


def bound(m: Measurement) -> Measurement:
    """`m` with every field filled from the wire storable in its Sample column, in place."""
    for name, limit in TEXT_LIMITS.items():
        setattr(m, name, storable_text(getattr(m, name))[:limit])
    m.http_status = bounded_int(m.http_status, high=_MAX_HTTP_STATUS)
    m.retry_after_s = bounded_number(m.retry_after_s, high=MAX_RETRY_AFTER_S)
    m.provider_latency_ms = bounded_number(m.provider_latency_ms, high=_MAX_MS)
    for name in USAGE_FIELDS:
        setattr(m, name, bounded_int(getattr(m, name), high=MAX_TOKEN_COUNT))
    for name in SAMPLE_FIELDS:
        value = getattr(m, name)
        if isinstance(value, float) and not math.isfinite(value):
            setattr(m, name, None)
    return m


def malformed_message(exc: BaseException) -> str:
    """The sample's error for a stream tokspeed could not read at all."""
    return f"{MALFORMED} stream: {type(exc).__name__}: {str(exc)[:200]}"
