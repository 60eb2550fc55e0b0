"""One event-loop timer for all streams: a heap of (deadline, seq, callback) entries.

asyncio's own timer heap compares TimerHandle objects in Python; with 256 streams sending
hundreds of events per second each, that bookkeeping cost as much as the sends. Here the heap
holds lists compared in C, and only the earliest deadline is armed on the loop.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import math
import time
from collections.abc import Callable

Entry = list  # [deadline (loop time, s), sequence number, callback or None when cancelled]


class Ticker:
    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._heap: list[Entry] = []
        self._seq = itertools.count()
        self._armed_at = math.inf
        self._handle: asyncio.TimerHandle | None = None
        self._running = False
        # asyncio fires a timer up to one clock resolution early; do the same for entries.
        self._slack = time.get_clock_info("monotonic").resolution

    def at(self, deadline: float, callback: Callable[[], None]) -> Entry:
        """Run `callback` at loop time `deadline`; the returned entry can be cancelled."""
        entry = [deadline, next(self._seq), callback]
        heapq.heappush(self._heap, entry)
        if deadline < self._armed_at and not self._running:
            self._arm(deadline)
        return entry

    @staticmethod
    def cancel(entry: Entry | None) -> None:
        if entry is not None:
            entry[2] = None

    def _arm(self, deadline: float) -> None:
        if self._handle is not None:
            self._handle.cancel()
        self._armed_at = deadline
        self._handle = self._loop.call_at(deadline, self._run)

    def _run(self) -> None:
        self._handle = None
        self._armed_at = math.inf
        heap = self._heap
        due_by = self._loop.time() + self._slack
        # Only entries due now: a late stream rescheduled into the past waits for the next
        # pass, so one stream catching up cannot monopolise the loop.
        due = []
        while heap and heap[0][0] <= due_by:
            due.append(heapq.heappop(heap))
        self._running = True  # arm once below, not on every push from a callback
        try:
            for entry in due:
                callback = entry[2]
                if callback is None:
                    continue
                try:
                    callback()
                except Exception as exc:  # one broken stream must not stop the others
                    self._loop.call_exception_handler(
                        {"message": "simulator stream callback failed", "exception": exc}
                    )
        finally:
            self._running = False
            if heap:
                self._arm(heap[0][0])
