"""Saves samples from a thread, so the event loop timing other streams never waits on the DB.

The loop's on_done callback only does `writer.put(index, measurement)` (a queue append). This
thread inserts each sample as it arrives and beats the run's heartbeat, also while requests are
still streaming. Inserts ignore conflicts on (run, index): a redelivered run never stores a
sample twice, and a write cut by a lost database connection is simply written again once the
database is back (benchmarks/resilience.py; the event loop keeps measuring meanwhile).
The heartbeat is fenced by the attempt number, so a worker whose run was taken
over by another (after it went silent) notices and stops. A writer that gave up on the database
(past TOKSPEED_DB_OUTAGE_S) beats no more either: the runner stops streaming at the next round
(`stopped`), since the run's lease runs out and another run of the endpoint may start.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from datetime import datetime

from django.db import DataError, connection, transaction
from django.utils import timezone

from providers.base import ErrorCategory

from .measure.measurement import Measurement
from .models import Run, RunStatus, Sample
from .resilience import DISCONNECTS, retry_db

log = logging.getLogger(__name__)

_STOP = object()


def malformed_row(row: Sample, exc: DataError) -> Sample:
    """The sample the database could store of `row`: when it started, and why it is an error."""
    return Sample(
        run_id=row.run_id,
        slot=row.slot,
        index=row.index,
        started_at=row.started_at,
        error_category=ErrorCategory.STREAM_BROKEN,
        error_message=f"malformed value from the provider: {str(exc).splitlines()[0][:200]}",
    )


class SampleWriter:
    def __init__(
        self,
        *,
        run_id: int,
        slot: datetime,
        attempt: int,
        heartbeat_s: float,
        prompt_count: int = 1,
        withheld: Callable[[str], str] | None = None,
    ) -> None:
        self.prompt_count = prompt_count  # sample i sent prompt i mod N of the workload's suite
        # A custom workload's text out of provider messages (benchmarks.withheld), before storing.
        self.withheld = withheld
        self.run_id = run_id
        self.slot = slot
        self.attempt = attempt
        self.heartbeat_s = heartbeat_s
        self.saved = 0
        self.lost = False  # another attempt owns the run now
        self.error: BaseException | None = None
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._work, name=f"samples-{run_id}", daemon=True)

    def __enter__(self) -> SampleWriter:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def put(self, index: int, measurement: Measurement) -> None:
        """Hand a finished request over; safe and cheap to call from the event loop."""
        self._queue.put((index, measurement))

    @property
    def stopped(self) -> bool:
        """No more samples will be stored or heartbeats beaten by this attempt: the run was
        taken over, or this thread gave up (the database stayed away past its patience)."""
        return self.lost or self.error is not None

    def close(self) -> None:
        """Write everything handed over so far, then stop; re-raises a write failure (a lost
        database as itself, so the task retries the run after its lease)."""
        if self._thread.is_alive():
            self._queue.put(_STOP)
            self._thread.join()
        if isinstance(self.error, DISCONNECTS):
            raise self.error
        if self.error is not None:
            raise RuntimeError(f"samples of run {self.run_id} could not be saved") from self.error

    def _work(self) -> None:
        try:
            self._loop()
        except BaseException as exc:  # reported by close() in the task's thread
            log.exception("sample writer of run %s failed", self.run_id)
            self.error = exc
        finally:
            connection.close()  # this thread's own connection

    def _loop(self) -> None:
        last_beat = 0.0
        stopping = False
        while not stopping:
            wait = max(0.0, last_beat + self.heartbeat_s - time.monotonic())
            batch = []
            try:
                batch.append(self._queue.get(timeout=wait))
                while True:  # drain what else is waiting: one INSERT for a whole burst end
                    batch.append(self._queue.get_nowait())
            except queue.Empty:
                pass
            if _STOP in batch:
                stopping = True
                batch = [item for item in batch if item is not _STOP]
            if batch:
                self._save(batch)
            if batch or time.monotonic() - last_beat >= self.heartbeat_s:
                self._beat()
                last_beat = time.monotonic()

    def _save(self, batch: list[tuple[int, Measurement]]) -> None:
        rows = [
            Sample(
                run_id=self.run_id,
                slot=self.slot,
                index=i,
                prompt_index=i % self.prompt_count,
                **self._values(m),
            )
            for i, m in batch
        ]
        try:
            retry_db(
                lambda: Sample.objects.bulk_create(rows, ignore_conflicts=True),
                what=f"saving {len(rows)} samples of run {self.run_id}",
            )
        except DataError:
            # A value the measurement's bounds missed: the others are saved one by one, the
            # one the database refuses is kept as a malformed sample (its timing, no figures).
            for row in rows:
                self._save_one(row)
        self.saved += len(rows)

    def _values(self, measurement: Measurement) -> dict:
        values = measurement.sample_values()
        if self.withheld is not None and values.get("error_message"):
            values["error_message"] = self.withheld(values["error_message"])
        return values

    def _save_one(self, row: Sample) -> None:
        def insert() -> None:
            try:
                with transaction.atomic():
                    Sample.objects.bulk_create([row], ignore_conflicts=True)
            except DataError as exc:
                log.warning("sample %s of run %s refused: %s", row.index, self.run_id, exc)
                refused = malformed_row(row, exc)
                Sample.objects.bulk_create([refused], ignore_conflicts=True)

        retry_db(insert, what=f"saving sample {row.index} of run {self.run_id}")

    def _beat(self) -> None:
        beating = Run.objects.filter(
            id=self.run_id, status=RunStatus.RUNNING, attempts=self.attempt
        )
        beaten = retry_db(
            lambda: beating.update(heartbeat_at=timezone.now()),
            what=f"heartbeat of run {self.run_id}",
        )
        if not beaten:
            self.lost = True
