"""The run digest: each endpoint-day's finished runs packed into one row the advisor reads fast.

A cold advice over 100 endpoints reads ~1,500 digest rows (one per endpoint and UTC day of the
window) instead of ~17,000 runs and a JSON value out of each run's summary. Each row is built in
SQL from the runs themselves, so building is idempotent and any row can be rebuilt at any time:

- when a run finishes (benchmarks.finish asks for `advisor.digest_run` by task name), its day;
- every hour, the days of the last RECENT_HOURS of slots (a lost message costs an hour at most);
- `manage.py advisor_digest [--days N]`, everything (or the last N days) again.

A run served below the lane it asked for (`Run.downgraded`, providers.lanes) is not that lane's
speed: it is left out of the digest, as it is left out of the boards and rollups. So is a run of
a custom workload: the digest is the standard workloads' (advice on a custom workload reads its
runs directly, measures.load_points(workload=…)).

A record is FIELDS as big-endian float64 (float8send), NaN where the run has no figure.

Each (vantage, day)'s rows are joined into one DayDigest row in the same transaction as they are
written (JOIN): a cold advice reads the window as ~15 rows, however many endpoints (one per
endpoint and day, 6,000 at 400 endpoints, cost the database and the client more than their
bytes). Builds take a transaction-level advisory lock, so two builds of one day never join it
from each other's uncommitted rows.

On PostgreSQL each row is built by one INSERT … SELECT. On another database (the embedded SQLite
of `make run`) the same rows are built in Python from the same run figures (`_build_rows`), so
`advisor_digest` writes there what it writes on PostgreSQL (no DayDigest: nothing reads it
there); the advice on SQLite still reads the runs themselves (measures.load_points): the same
answer, which tests hold the two paths to.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

import numpy as np
import psycopg
from django.db import connection, connections, router, transaction

from benchmarks.models import Run, Vantage

from .batch import Stacked, kind_masks, kinds_of, rows_at, stack, tally_rows
from .measures import FIELDS, POINT_COLUMNS, SLOT, RunPoint, as_rows, load_columns, load_points
from .models import DayDigest, RunDigest

RECENT_HOURS = 48
FINISHED = tuple(sorted(Run.FINISHED))
# One SQL expression per field of FIELDS, in order: what the direct path (measures) reads.
EXPRESSIONS = (
    "extract(epoch FROM r.slot)::float8",
    "r.tod_bucket::float8",
    "r.context_tokens::float8",
    "r.concurrency::float8",
    "r.input_tokens::float8",
    "r.ok_count::float8",
    "r.error_count::float8",
    "r.ttft_p50_ms",
    "(r.summary -> 'ttft_ms' ->> 'p90')::float8",
    "r.decode_tps_p50",
    "(r.summary -> 'decode_tps' ->> 'p10')::float8",
    "r.saturated_count::float8",
)
assert len(EXPRESSIONS) == len(FIELDS)  # noqa: S101  (a mismatch would misread every record)
RECORD = " || ".join(f"float8send(coalesce({e}, 'NaN'::float8))" for e in EXPRESSIONS)
BUILD = f"""
INSERT INTO advisor_rundigest (vantage_id, endpoint_id, day, runs, points)
SELECT r.vantage_id, r.endpoint_id, (r.slot AT TIME ZONE 'UTC')::date, count(*),
       string_agg({RECORD}, ''::bytea ORDER BY r.slot, r.id)
FROM benchmarks_run r JOIN benchmarks_workload w ON w.id = r.workload_id
WHERE r.status = ANY(%(finished)s) AND r.slot >= %(start)s AND r.slot < %(end)s
  AND NOT r.downgraded AND NOT w.custom {{runs}}
GROUP BY 1, 2, 3
ON CONFLICT (vantage_id, endpoint_id, day)
DO UPDATE SET runs = EXCLUDED.runs, points = EXCLUDED.points
"""  # noqa: S608  (fixed SQL expressions above; every value is a parameter)
CLEAR = "DELETE FROM advisor_rundigest WHERE day >= %(first)s AND day < %(stop)s {digests}"
# Each day's rows joined into its DayDigest (what the advice reads), after they are written.
JOIN = """
INSERT INTO advisor_daydigest (vantage_id, day, owners, points)
SELECT vantage_id, day,
       string_agg(int8send(endpoint_id) || int4send(runs), ''::bytea ORDER BY endpoint_id),
       string_agg(points, ''::bytea ORDER BY endpoint_id)
FROM advisor_rundigest WHERE day >= %(first)s AND day < %(stop)s {vantage}
GROUP BY 1, 2
ON CONFLICT (vantage_id, day) DO UPDATE SET owners = EXCLUDED.owners, points = EXCLUDED.points
"""
UNJOIN = """
DELETE FROM advisor_daydigest d WHERE day >= %(first)s AND day < %(stop)s {vantage}
  AND NOT EXISTS (
    SELECT FROM advisor_rundigest r WHERE r.vantage_id = d.vantage_id AND r.day = d.day
  )
"""
# Builds of the same day one at a time: two runs of a day finishing at once each rebuild their
# endpoint's row and then the day's DayDigest, and without it the later commit could write a day
# joined before the other's row was there (each statement sees what was committed when it began).
LOCK = "SELECT pg_advisory_xact_lock(%(lock)s)"
LOCK_KEY = 0x616476_69736F72  # "advisor"


def _midnight(day: date) -> datetime:
    return datetime.combine(day, time(), tzinfo=UTC)


def rebuild_days(
    first: date, stop: date, *, endpoint_id: int | None = None, vantage_id: int | None = None
) -> int:
    """Build the digest of days [first, stop) again (of one endpoint and vantage when given);
    returns the number of rows written."""
    params = {
        "finished": list(FINISHED),
        "start": _midnight(first),
        "end": _midnight(stop),
        "first": first,
        "stop": stop,
        "endpoint": endpoint_id,
        "vantage": vantage_id,
    }
    if connection.vendor != "postgresql":
        return _build_rows(params, endpoint_id=endpoint_id, vantage_id=vantage_id)
    runs = digests = vantage = ""
    if endpoint_id is not None and vantage_id is not None:
        runs = "AND r.endpoint_id = %(endpoint)s AND r.vantage_id = %(vantage)s"
        digests = "AND endpoint_id = %(endpoint)s AND vantage_id = %(vantage)s"
        vantage = "AND vantage_id = %(vantage)s"
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(LOCK, {"lock": LOCK_KEY})
        cursor.execute(CLEAR.format(digests=digests), params)
        cursor.execute(BUILD.format(runs=runs), params)
        written = cursor.rowcount
        _join(cursor, params, vantage=vantage)
        return written


def _join(cursor, params: dict, *, vantage: str) -> None:
    """The DayDigest of days [first, stop) (of one vantage when `vantage` names it) joined again
    from their RunDigest rows; a day left without any, deleted."""
    cursor.execute(JOIN.format(vantage=vantage), params)
    cursor.execute(UNJOIN.format(vantage=vantage), params)


def _build_rows(params: dict, *, endpoint_id: int | None, vantage_id: int | None) -> int:
    """BUILD's rows made in Python (databases without float8send and string_agg of bytea)."""
    runs = Run.objects.filter(
        status__in=FINISHED,
        slot__gte=params["start"],
        slot__lt=params["end"],
        downgraded=False,
        workload__custom=False,
    )
    digests = RunDigest.objects.filter(day__gte=params["first"], day__lt=params["stop"])
    if endpoint_id is not None and vantage_id is not None:
        runs = runs.filter(endpoint_id=endpoint_id, vantage_id=vantage_id)
        digests = digests.filter(endpoint_id=endpoint_id, vantage_id=vantage_id)
    groups: dict[tuple[int, int, date], list[RunPoint]] = {}
    for vantage, endpoint, *figures in runs.order_by("slot", "id").values_list(
        "vantage_id", "endpoint_id", *POINT_COLUMNS
    ):
        day = figures[0].astimezone(UTC).date()
        groups.setdefault((vantage, endpoint, day), []).append(RunPoint(*figures))
    rows = [
        RunDigest(
            vantage_id=vantage,
            endpoint_id=endpoint,
            day=day,
            runs=len(points),
            points=as_rows(points).astype(">f8").tobytes(),  # float8send's bytes, NaN included
        )
        for (vantage, endpoint, day), points in groups.items()
    ]
    with transaction.atomic():
        digests.delete()
        RunDigest.objects.bulk_create(rows, batch_size=500)
    return len(rows)


def digest_run(run_id: int) -> int:
    """Build the day of one run again (after it finished)."""
    run = Run.objects.filter(id=run_id).values("slot", "endpoint_id", "vantage_id").first()
    if run is None:
        return 0
    day = run["slot"].astimezone(UTC).date()
    return rebuild_days(
        day,
        day + timedelta(days=1),
        endpoint_id=run["endpoint_id"],
        vantage_id=run["vantage_id"],
    )


def digest_recent(*, now: datetime, hours: int = RECENT_HOURS) -> int:
    """Build the days of the last `hours` of slots again (catches a finish whose task was lost)."""
    first = (now - timedelta(hours=hours)).astimezone(UTC).date()
    return rebuild_days(first, now.astimezone(UTC).date() + timedelta(days=1))


def rebuild(*, days: int | None = None, now: datetime) -> int:
    """Build every day again, or the last `days` days; a day at a time keeps transactions short."""
    last = now.astimezone(UTC).date()
    if days is not None:
        first = last - timedelta(days=days)
    else:
        oldest = Run.objects.order_by("slot").values_list("slot", flat=True).first()
        if oldest is None:
            return 0
        first = oldest.astimezone(UTC).date()
    written = 0
    day = first
    while day <= last:
        written += rebuild_days(day, day + timedelta(days=1))
        day += timedelta(days=1)
    return written


# One DayDigest row per day of the window, in whatever order; sorted here by day (days past the
# first: unique, so no comparison ever reaches the bytes). Each row comes with its version (the
# tuple's xmin and ctid: every rewrite of a row is a new tuple, with a new place within its
# transaction and a new xmin in a later one), and with its bytes only where the reader has not
# got that version already.
VERSION = "xmin::text || '/' || ctid::text"
READ = f"""
SELECT day - %(first)s, {VERSION},
       CASE WHEN {VERSION} = ANY(%(known)s::text[]) THEN NULL ELSE owners END,
       CASE WHEN {VERSION} = ANY(%(known)s::text[]) THEN NULL ELSE points END
FROM advisor_daydigest
WHERE vantage_id = %(vantage)s AND day >= %(first)s AND day <= %(last)s
"""  # noqa: S608  (a fixed expression; every value is a parameter)
OWNER = np.dtype([("endpoint", ">i8"), ("records", ">i4")])  # DayDigest.owners


@dataclass(frozen=True, slots=True)
class _Runs:
    """Runs of each endpoint of a day as project_lean reads them (advisor.batch.Stacked): by
    endpoint, its runs, requests ok and failed, saturated runs and newest slot; its usable runs
    by kind (base, long-context, parallel), each kind's rows and their count by endpoint."""

    sizes: np.ndarray
    ok: np.ndarray
    errors: np.ndarray
    saturated: np.ndarray
    newest: np.ndarray
    kinds: tuple[tuple[np.ndarray, np.ndarray], ...]


def _runs(sizes: np.ndarray, records: np.ndarray) -> _Runs:
    """The _Runs of records grouped by endpoint (`sizes` of each, oldest first within each)."""
    count = len(sizes)
    group = np.repeat(np.arange(count), sizes)
    kinds = tuple(
        (rows_at(records, mask), np.bincount(group[mask], minlength=count))
        for mask in kind_masks(records)
    )
    return _Runs(sizes, *tally_rows(records, group, count), kinds)


@dataclass(frozen=True, slots=True)
class _Day:
    """One DayDigest row as read: its endpoints, their record counts, its records as floats,
    its first and last slot, and its runs as project_lean reads them."""

    endpoint: np.ndarray
    sizes: np.ndarray
    records: np.ndarray
    first: float
    last: float
    runs: _Runs

    def within(self, start: float, end: float) -> _Runs:
        """The day's runs with start ≤ slot ≤ end (the window cuts its first and last day)."""
        if start <= self.first and self.last <= end:
            return self.runs
        slot = self.records[:, SLOT]
        kept = (slot >= start) & (slot <= end)
        group = np.repeat(np.arange(len(self.sizes)), self.sizes)
        sizes = np.bincount(group[kept], minlength=len(self.sizes))
        return _runs(sizes, self.records[kept])


# The rows this process read last, by database and vantage, by version: a read of the same
# window fetches only the days rewritten since (after a run lands: that run's day), and a day
# whose row is gone is not read at all. Replaced whole by each read (threads of a worker share
# it; a lost race costs a fetch, never a wrong row).
_read_days: dict[tuple[str, int], dict[str, _Day]] = {}


def _day(owners: bytes, points: bytes) -> _Day:
    segments = np.frombuffer(owners, dtype=OWNER)
    sizes = segments["records"].astype(np.intp)
    records = np.frombuffer(points, dtype=">f8").astype(np.float64).reshape(-1, len(FIELDS))
    slot = records[:, SLOT]
    return _Day(
        endpoint=segments["endpoint"].astype(np.int64),
        sizes=sizes,
        records=records,
        first=float(slot.min()) if len(slot) else math.inf,
        last=float(slot.max()) if len(slot) else -math.inf,
        runs=_runs(sizes, records),
    )


def _read(alias, params: dict) -> list[_Day]:
    """The window's days in order, each fetched only if this process has not read its version."""
    key = (f"{alias.settings_dict['HOST']}:{alias.settings_dict['PORT']}/{alias.alias}"
           f"/{alias.settings_dict['NAME']}", params["vantage"])  # fmt: skip
    known = _read_days.get(key, {})
    # The alias the ORM would read DayDigest from (a replica where one is configured). Django's
    # own cursor binds on the client, which cannot ask for binary results.
    alias.ensure_connection()
    with psycopg.Cursor(alias.connection) as cursor:
        cursor.execute(READ, {**params, "known": list(known)}, binary=True)
        rows = cursor.fetchall()
    rows.sort()
    days = {
        version: known[version] if owners is None else _day(owners, points)
        for _, version, owners, points in rows
    }
    _read_days[key] = days
    return list(days.values())


def _gather(
    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray | None]], count: int, order: str = "F"
) -> tuple[np.ndarray | None, np.ndarray]:
    """Segments of rows from each day gathered by position, then day: `parts` gives each day's
    (position of each of its endpoints, -1 where not asked; their row counts; their rows one
    endpoint after another, None when only the positions are wanted). Returns (the rows, each
    row's position; column-major unless `order` says "C"); no Python step per endpoint or
    row."""
    position = np.concatenate([part[0] for part in parts])
    sizes = np.concatenate([part[1] for part in parts])
    wanted = np.flatnonzero(position >= 0)
    ranked = wanted[np.argsort(position[wanted], kind="stable")]  # stable: days stay in order
    kept = sizes[ranked]
    group = np.repeat(position[ranked], kept)
    if any(part[2] is None for part in parts):
        return None, group
    # Where each segment's rows go: after the segments before it in that order (-1: left).
    place = np.full(len(sizes), -1, dtype=np.intp)
    place[ranked] = np.cumsum(kept) - kept
    rows = np.empty((int(kept.sum()), len(FIELDS)), order=order)
    first = 0
    for day_position, day_sizes, day_rows in parts:
        segment = slice(first, first + len(day_position))
        first = segment.stop
        day_places = place[segment]
        here = day_places >= 0
        starts = np.cumsum(day_sizes) - day_sizes
        shift = np.repeat((day_places - starts)[here], day_sizes[here])
        if here.all():  # every endpoint of the day asked for (the usual question)
            rows[np.arange(len(day_rows)) + shift] = day_rows
        else:
            source = np.repeat(here, day_sizes)
            rows[np.flatnonzero(source) + shift] = day_rows[source]
    return rows, group


def _window(
    endpoint_ids: list[int], vantage: Vantage | None, now: datetime, days: int
) -> tuple[list[_Day], datetime] | None:
    """The window's days read from the digest, and its start; None where the digest is not
    read (no endpoints, no vantage, or not PostgreSQL: the runs themselves are)."""
    alias = connections[router.db_for_read(DayDigest)]
    if not endpoint_ids or vantage is None or alias.vendor != "postgresql":
        return None
    start = now - timedelta(days=days)
    params = {
        "vantage": vantage.id,
        "first": start.astimezone(UTC).date(),
        "last": now.astimezone(UTC).date(),
    }
    return _read(alias, params), start


def _positions(read: list[_Day], endpoint_ids: list[int]) -> list[np.ndarray]:
    """Each day's endpoints' places in `endpoint_ids` (-1: not asked)."""
    asked = np.asarray(endpoint_ids, dtype=np.int64)
    by_id = np.argsort(asked, kind="stable")
    positions = []
    for day in read:
        at = np.minimum(np.searchsorted(asked[by_id], day.endpoint), len(asked) - 1)
        found = asked[by_id[at]] == day.endpoint
        positions.append(np.where(found, by_id[at], -1))
    return positions


def load_digest(
    *, endpoint_ids: list[int], vantage: Vantage | None, now: datetime, days: int
) -> dict[int, np.ndarray]:
    """What advisor.measures.load_points reads from the runs, read from the digest: each
    endpoint's finished runs in the window as rows of FIELDS, oldest first.

    One query of one DayDigest per day (~15 rows, not one per endpoint and day), its rows in
    PostgreSQL's binary format (a bytea arrives as its bytes, not as twice as many hex digits
    to decode), the bytes only of days this process has not read as they are now: each day
    lists its endpoints' records one after the other, and the asked-for endpoints' runs of
    every day are gathered by endpoint, then day, with no Python object per endpoint or
    record."""
    window = _window(endpoint_ids, vantage, now, days)
    if window is None:
        return load_points(endpoint_ids=endpoint_ids, vantage=vantage, now=now, days=days)
    read, start = window
    if not read:
        return {}
    ids = sorted(set(endpoint_ids))
    parts = [
        (position, day.sizes, day.records)
        for position, day in zip(_positions(read, ids), read, strict=True)
    ]
    records, group = _gather(parts, len(ids), order="C")
    return load_columns(np.asarray(ids)[group], records, start=start, now=now)


def load_stacked(
    *, endpoint_ids: list[int], vantage: Vantage | None, now: datetime, days: int, users: int
) -> Stacked:
    """The endpoints' runs in the window stacked as advisor.batch.project_lean reads them, in
    `endpoint_ids`' order (`users`: the shape's concurrency; parallel runs' rows are read only
    above one user).

    Each day's runs are split by kind and tallied once, when this process reads that version of
    the day (after a run lands: its own day); a window gathers the days' kinds and adds up their
    tallies, so no question splits, masks or copies every run of the window again. The first and
    last day, cut by the window, are split as cut. Where the digest is not read, the runs
    themselves are (advisor.measures.load_points), stacked."""
    window = _window(endpoint_ids, vantage, now, days)
    if window is None:
        points = load_points(endpoint_ids=endpoint_ids, vantage=vantage, now=now, days=days)
        empty = np.empty((0, len(FIELDS)))
        return stack({e: points.get(e, empty) for e in endpoint_ids}, users=users)
    read, start = window
    count = len(endpoint_ids)
    positions = _positions(read, endpoint_ids) if read else []
    runs = [day.within(start.timestamp(), now.timestamp()) for day in read]
    kept = np.concatenate(positions) if read else np.zeros(0, np.intp)
    mine = kept >= 0

    def total(figure: str) -> np.ndarray:
        values = np.concatenate([getattr(r, figure) for r in runs]) if read else np.zeros(0)
        return np.bincount(kept[mine], values[mine], count)

    newest = np.full(count, np.nan)
    if read:
        np.fmax.at(newest, kept[mine], np.concatenate([r.newest for r in runs])[mine])
    split = []
    for kind in range(3):
        wanted = kind < 2 or users > 1  # parallel runs: only their count for one user
        rows, group = _gather(
            [(p, r.kinds[kind][1], r.kinds[kind][0] if wanted else None)
             for p, r in zip(positions, runs, strict=True)]
            or [(np.zeros(0, np.intp), np.zeros(0, np.intp), None)],
            count,
        )  # fmt: skip
        split += [np.empty((0, len(FIELDS))) if rows is None else rows, group]
    sizes = total("sizes").astype(int).tolist()
    return Stacked(
        list(endpoint_ids), sizes, total("ok"), total("errors"), total("saturated"), newest,
        kinds_of(*split),
    )  # fmt: skip
