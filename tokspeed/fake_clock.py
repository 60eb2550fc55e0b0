"""Run the test suite at a chosen instant: `TOKSPEED_FAKE_NOW=2026-03-08T06:30:00Z pytest`.

`bin/fake-clock-tests` uses it to prove that no test depends on the hour, the date or the time
zone it happens to run at. The clock keeps ticking from that instant. Every process that loads the
test settings travels (pytest itself, and the Celery workers, simulator and management commands
that tests start), and they all travel to the same timeline: the first process records the real
epoch it started from in TOKSPEED_FAKE_EPOCH, and the others add the real time elapsed since then.
Monotonic clocks are left alone, so timeouts and measured durations are unaffected.
"""

import os
import time
from datetime import datetime, timedelta

FAKE_NOW_VARIABLE = "TOKSPEED_FAKE_NOW"
FAKE_EPOCH_VARIABLE = "TOKSPEED_FAKE_EPOCH"

_traveller = None


def parse_instant(text: str) -> datetime:
    """An ISO 8601 instant with its offset ("Z" allowed); a naive one is refused."""
    instant = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    if instant.tzinfo is None:
        raise ValueError(f"{FAKE_NOW_VARIABLE}={text!r} needs an offset, e.g. 2026-03-08T06:30Z")
    return instant


def travel_if_asked() -> datetime | None:
    """Start travelling when TOKSPEED_FAKE_NOW is set; returns the instant travelled to."""
    global _traveller
    text = os.environ.get(FAKE_NOW_VARIABLE)
    if not text or _traveller is not None:
        return None
    import time_machine  # a test requirement: only imported when travelling

    start = parse_instant(text)
    if not os.environ.get(FAKE_EPOCH_VARIABLE):
        os.environ[FAKE_EPOCH_VARIABLE] = repr(time.time())
    epoch = float(os.environ[FAKE_EPOCH_VARIABLE])
    destination = start + timedelta(seconds=max(0.0, time.time() - epoch))
    _traveller = time_machine.travel(destination, tick=True)
    _traveller.start()
    return destination
