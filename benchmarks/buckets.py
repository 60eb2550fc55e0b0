"""Time-of-day buckets (UTC) used to compare like with like."""

from datetime import UTC, datetime

BUCKET_HOURS = 6
BUCKETS = {0: "00–06 UTC", 1: "06–12 UTC", 2: "12–18 UTC", 3: "18–24 UTC"}


def tod_bucket(moment: datetime) -> int:
    """The time-of-day bucket (0–3) of an aware datetime, in UTC."""
    return moment.astimezone(UTC).hour // BUCKET_HOURS
