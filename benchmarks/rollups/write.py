"""Writing rollups: one finished run into its day and month rows, or all of them again.

Metrics sketched (run medians, as the exact board reads them): ttft, decode, e2e,
throughput, input_tokens, output_tokens; and prefill (long-context TTFT − base TTFT of the same
endpoint, vantage and slot), kept on the long-context run's rows once both runs have a TTFT.
"""

from collections import Counter
from collections.abc import Iterable
from datetime import date
from typing import Any

from django.db import transaction

from ..models import Run, RunRollup
from ..selectors import materialized_write as materialized
from ..selectors import window_figures_write as window
from ..selectors.scope import Workloads
from . import packed, sketch, windows

SPANS = ("day", "month")
METRICS = {
    "ttft": "ttft_p50_ms",
    "decode": "decode_tps_p50",
    "e2e": "e2e_p50_ms",
    "throughput": "throughput_tps",
    "input_tokens": "input_tokens",
    "output_tokens": "output_tokens_p50",
}
_FIELDS = (
    "id", "endpoint_id", "workload_id", "vantage_id", "concurrency", "slot", "tod_bucket",
    "status", "finished_at", "ok_count", "error_count", "saturated_count", "summary",
    "downgraded",
    *METRICS.values(),
)  # fmt: skip

Key = tuple[int, int, int, int, str, date, int]


def key_of(run: dict[str, Any], span: str) -> Key:
    day = run["slot"].date()
    if span == "month":
        day = day.replace(day=1)
    return (
        run["endpoint_id"], run["workload_id"], run["vantage_id"], run["concurrency"], span,
        day, run["tod_bucket"],
    )  # fmt: skip


def _blank() -> dict[str, Any]:
    return {
        "runs": 0, "ok_count": 0, "error_count": 0, "saturated_runs": 0,
        "errors_by_category": {}, "sketches": {},
    }  # fmt: skip


def fold(row: dict[str, Any], run: dict[str, Any]) -> None:
    """Count one run into a rollup row's fields (in place)."""
    row["runs"] += 1
    row["ok_count"] += run["ok_count"]
    row["error_count"] += run["error_count"]
    # A run whose client was saturated stays in the sketches and is counted (docs/design.md §4).
    row["saturated_runs"] += int(bool(run.get("saturated_count")))
    categories = (run.get("summary") or {}).get("errors_by_category") or {}
    if isinstance(categories, dict):
        for category, number in categories.items():
            if isinstance(number, int):
                tally = row["errors_by_category"]
                tally[category] = tally.get(category, 0) + number
    for metric, column in METRICS.items():
        sketch.add(row["sketches"].setdefault(metric, {}), run[column])


def fold_prefill(row: dict[str, Any], delta: float) -> None:
    sketch.add(row["sketches"].setdefault("prefill", {}), delta)


def _partner_delta(run: dict[str, Any], workloads: Workloads) -> tuple[dict, float] | None:
    """(the long-context run, its prefill delta) when this run completes a base/long pair."""
    base, long = workloads.base(), workloads.long()
    if base is None or long is None or run["workload_id"] not in (base.id, long.id):
        return None
    other = long.id if run["workload_id"] == base.id else base.id
    partner = (
        Run.objects.filter(
            endpoint_id=run["endpoint_id"],
            vantage_id=run["vantage_id"],
            slot=run["slot"],
            workload_id=other,
        )
        .values(*_FIELDS)
        .first()
    )
    if partner is None:
        return None
    long_run, base_run = (partner, run) if other == long.id else (run, partner)
    if long_run["status"] not in Run.FINISHED or base_run["status"] not in Run.FINISHED:
        return None
    # The pair is counted by whichever of its two runs finished last, so once.
    if _finish_order(partner) > _finish_order(run):
        return None
    if long_run["ttft_p50_ms"] is None or base_run["ttft_p50_ms"] is None:
        return None
    return long_run, long_run["ttft_p50_ms"] - base_run["ttft_p50_ms"]


def _finish_order(run: dict[str, Any]) -> tuple:
    return (run["finished_at"] or run["slot"], run["id"])


def add_run(run_id: int) -> None:
    """Count one just-finished run into its rollups (called once: finish_run's claim)."""
    run = Run.objects.filter(id=run_id, status__in=Run.FINISHED).values(*_FIELDS).first()
    if run is None:
        return
    if run["downgraded"]:
        # Not counted (below its lane), but a long-context run's prefill pairs with it.
        with transaction.atomic():
            materialized.lock([run["endpoint_id"]])
            window.write_endpoint(run["endpoint_id"], run["vantage_id"], run["slot"])
        return
    pair = _partner_delta(run, Workloads.load())
    with transaction.atomic():
        # Runs of one endpoint count in turn, so each rewrite of its materialized board
        # figures sees the rollups of every run counted before it.
        materialized.lock([run["endpoint_id"]])
        for span in SPANS:
            _update(key_of(run, span), lambda row: fold(row, run))
            if pair is not None:
                long_run, delta = pair
                _update(key_of(long_run, span), lambda row, d=delta: fold_prefill(row, d))
        materialized.write_endpoint(run["endpoint_id"], run["vantage_id"], run["tod_bucket"])
        window.write_endpoint(run["endpoint_id"], run["vantage_id"], run["slot"])


def _update(key: Key, change) -> None:
    endpoint, workload, vantage, concurrency, span, day, bucket = key
    rollup, _ = RunRollup.objects.select_for_update().get_or_create(
        endpoint_id=endpoint,
        workload_id=workload,
        vantage_id=vantage,
        concurrency=concurrency,
        span=span,
        day=day,
        tod_bucket=bucket,
    )
    row = {name: getattr(rollup, name) for name in _blank()}
    before = (
        row["runs"], row["ok_count"], row["error_count"], sketch.triples(row["sketches"]),
        row["saturated_runs"],
    )  # fmt: skip
    row["sketches"] = {metric: dict(bins) for metric, bins in row["sketches"].items()}
    change(row)
    for name, value in row.items():
        setattr(rollup, name, value)
    after = sketch.triples(row["sketches"])
    rollup.packed = packed.pack(after)
    rollup.save()
    if span == "day":
        bins = Counter({(m, n): c for m, n, c in after})
        bins.subtract({(m, n): c for m, n, c in before[3]})
        windows.add_late(
            key,
            runs=row["runs"] - before[0],
            ok=row["ok_count"] - before[1],
            errors=row["error_count"] - before[2],
            saturated=row["saturated_runs"] - before[4],
            bins=[(m, n, c) for (m, n), c in bins.items() if c],
        )


def rebuild(*, batch: int = 5_000) -> int:
    """Recompute every rollup from the finished runs; the number of rows written."""
    workloads = Workloads.load()
    base, long = workloads.base(), workloads.long()
    rows: dict[Key, dict[str, Any]] = {}
    pairs: dict[tuple, dict[int, dict[str, Any]]] = {}
    # A run served below its lane is kept out of the lane's figures (providers.lanes).
    runs = (
        Run.objects.filter(downgraded=False).values(*_FIELDS).order_by().iterator(chunk_size=batch)
    )
    for run in runs:
        if base and long and run["workload_id"] in (base.id, long.id):
            slot_key = (run["endpoint_id"], run["vantage_id"], run["slot"])
            pairs.setdefault(slot_key, {})[run["workload_id"]] = _light(run)
        if run["status"] not in Run.FINISHED:
            continue
        run = _light(run)
        for span in SPANS:
            fold(rows.setdefault(key_of(run, span), _blank()), run)
    for pair in pairs.values():
        long_run, base_run = pair.get(long.id), pair.get(base.id)  # type: ignore[union-attr]
        if long_run is None or base_run is None or long_run["status"] not in Run.FINISHED:
            continue
        if long_run["ttft_p50_ms"] is None or base_run["ttft_p50_ms"] is None:
            continue
        for span in SPANS:
            row = rows.setdefault(key_of(long_run, span), _blank())
            fold_prefill(row, long_run["ttft_p50_ms"] - base_run["ttft_p50_ms"])
    with transaction.atomic():
        materialized.drop()  # merged from the rows being replaced
        window.drop()  # runs changed outside the writers: computed again (beat task, reads)
        RunRollup.objects.all().delete()
        RunRollup.objects.bulk_create(_objects(rows.items()), batch_size=2_000)
    return len(rows)


def _light(run: dict[str, Any]) -> dict[str, Any]:
    # Only the error tallies of the summary are needed: drop the rest (memory on a rebuild).
    summary = run.get("summary") or {}
    return {**run, "summary": {"errors_by_category": summary.get("errors_by_category") or {}}}


def _objects(items: Iterable[tuple[Key, dict[str, Any]]]) -> Iterable[RunRollup]:
    for (endpoint, workload, vantage, concurrency, span, day, bucket), row in items:
        yield RunRollup(
            endpoint_id=endpoint,
            workload_id=workload,
            vantage_id=vantage,
            concurrency=concurrency,
            span=span,
            day=day,
            tod_bucket=bucket,
            packed=packed.pack(sketch.triples(row["sketches"])),
            **row,
        )
