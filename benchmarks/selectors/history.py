"""An endpoint's history: everything its page and the history API show (Run rows; over 90 days
the day and window rollups)."""

from datetime import datetime
from typing import Any

from django.db import connections, router
from django.db.models import Count, Max, Q

from providers.models import Endpoint

from ..buckets import BUCKETS
from ..models import Run, Vantage, Workload
from . import sketched
from .aggregates import Percentile, Quartiles, percentile, quartiles
from .days import day_medians, day_series, figures_kind, per_day, points_kind
from .history_sql import RunWindow
from .runs import (
    RUN_POINT_FIELDS,
    SlotIso,
    errors_by_category,
    iso,
    point_rows,
    run_band,
    run_point,
    tallied,
)
from .scope import Workloads, resolve_vantage, since, window_runs

RECENT_RUNS = 20


def endpoint_history(
    endpoint: Endpoint,
    *,
    workload: Workload | str | None = None,
    vantage: Vantage | str | None = None,
    window_hours: int = 72,
    workloads: Workloads | None = None,
) -> dict[str, Any]:
    """A JSON-ready dict: the run series of one workload, its time-of-day profile, base vs
    long-context TTFT, the concurrency curve, errors by category, recent runs and the roofline.

    workload/vantage: an instance or a slug; None = the base workload / the default vantage.
    workloads: every workload, when the caller has read them already (Workloads.load).
    Times in ms, speeds in tokens/s (decode per user; throughput in aggregate), datetimes ISO.
    Over 90 days the series and the context pairs are one point per UTC day ("points": "day",
    selectors.days) and the summary, profile, concurrency and context figures are sketched
    ("figures": "sketched", selectors.sketched).
    """
    workloads = workloads or Workloads.load()
    workload_obj = workloads.resolve(workload)
    vantage_obj = resolve_vantage(vantage)
    if per_day(window_hours):
        charts = _day_charts(endpoint, workload_obj, vantage_obj, window_hours, workloads)
        errors = sketched.errors_by_category(
            endpoint.id, vantage=vantage_obj, window_hours=window_hours
        )
    else:
        start = since(window_hours)
        runs = window_runs(vantage=vantage_obj, window_hours=window_hours, start=start)
        runs = runs.filter(endpoint=endpoint)
        window = RunWindow.of(vantage_obj, start, endpoint_id=endpoint.id)
        charts = _run_charts(runs, window, workload_obj, workloads)
        errors = tallied(window.error_tallies()) if window else errors_by_category(runs)
    return {
        "endpoint": _endpoint_info(endpoint),
        "workload": workload_obj.slug if workload_obj else None,
        "vantage": vantage_obj.slug if vantage_obj else None,
        "window_hours": window_hours,
        "points": points_kind(window_hours),
        "figures": figures_kind(window_hours),
        **charts,
        "errors": errors,
        "recent_runs": _recent(endpoint, vantage_obj, window_hours, workloads),
        "roofline": _roofline(endpoint, charts["summary"]["decode_tps"]["p50"]),
    }


def _run_charts(
    runs: Any, window: RunWindow | None, workload: Workload | None, workloads: Workloads
) -> dict[str, Any]:
    """endpoint_history's summary, series, bands, profile and context, one point per run
    (window: the same runs' grouped reads as SQL written out, on PostgreSQL)."""
    if workload is None:
        series = []
    elif window is not None:
        series = window.point_rows(workload.id)
    else:
        series = point_rows(runs.filter(workload=workload).order_by("slot"))
    points = [run_point(run) for run in series]
    return {
        "summary": _summary(points),
        "runs": points,
        "bands": {m: [run_band(run, m) for run in series] for m in ("ttft", "decode")},
        "tod_profile": _tod_profile(points),
        "context": _context(runs, window, workloads),
        "concurrency": _concurrency(runs, window, workloads),
    }


def _day_charts(
    endpoint: Endpoint,
    workload: Workload | None,
    vantage: Vantage | None,
    window_hours: int,
    workloads: Workloads,
) -> dict[str, Any]:
    """_run_charts over a long window: the series and context pairs one point per UTC day
    (day rollups), the summary, profile, context figures and concurrency curve sketched
    (selectors.sketched: the window rollups)."""
    base, long = workloads.base(), workloads.long()
    charted = list(dict.fromkeys(w.id for w in (workload, base, long) if w is not None))
    # The base and long-context series are read only for their TTFT (the context pairs).
    paired = {w.id for w in (base, long) if w is not None and w != workload}
    series = day_series(
        [endpoint.id], charted, vantage=vantage, window_hours=window_hours, ttft_only=paired
    )
    points = series[(endpoint.id, workload.id)] if workload else []
    bands = [p.pop("bands") for p in points]
    figures = sketched.history_figures(
        [endpoint.id], workload, workloads, vantage=vantage, window_hours=window_hours
    )[endpoint.id]
    context = {"pairs": [], **figures["context"]}
    if base is not None and long is not None:
        context["pairs"] = _day_pairs(
            series[(endpoint.id, base.id)], series[(endpoint.id, long.id)]
        )
    return {
        "summary": figures["summary"],
        "runs": points,
        "bands": {m: [band[m] for band in bands] for m in ("ttft", "decode")},
        "tod_profile": figures["tod_profile"],
        "context": context,
        "concurrency": figures["concurrency"],
    }


def _day_pairs(base: list[dict[str, Any]], long: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The base vs long-context chart's points over a long window: each day's two medians."""
    by_day: dict[str, dict[str, Any]] = {}
    for key, points in (("base_ttft_ms", base), ("long_ttft_ms", long)):
        for point in points:
            pair = by_day.setdefault(
                point["day"], {"slot": point["slot"], "base_ttft_ms": None, "long_ttft_ms": None}
            )
            pair[key] = point["ttft_ms"]
    return [by_day[day] for day in sorted(by_day)]


def compare_histories(
    endpoints: list[Endpoint],
    *,
    workload: Workload | str | None = None,
    vantage: Vantage | str | None = None,
    window_hours: int = 72,
    workloads: Workloads | None = None,
) -> list[dict[str, Any]]:
    """What the compare page charts of each endpoint's history, in the order given: the same
    values as endpoint_history's "endpoint", "tod_profile", "context" (without its per-slot
    pairs) and "concurrency", and its "runs" as (slot, TTFT, decode) points; one query per part
    for all the endpoints, instead of one whole history (bands, errors, recent runs) each.
    workloads: every workload, when the caller has read them already (Workloads.load)."""
    workloads = workloads or Workloads.load()
    workload_obj = workloads.resolve(workload)
    vantage_obj = resolve_vantage(vantage)
    ids = [endpoint.id for endpoint in endpoints]
    if per_day(window_hours):
        points, figures = _compare_days(ids, workload_obj, vantage_obj, window_hours, workloads)
    else:
        start = since(window_hours)
        runs = window_runs(vantage=vantage_obj, window_hours=window_hours, start=start)
        runs = runs.filter(endpoint_id__in=ids)
        window = RunWindow.of(vantage_obj, start, endpoint_ids=ids)
        points, figures = _compare_runs(runs, window, ids, workload_obj, workloads)
    return [
        {
            "endpoint": _endpoint_info(endpoint),
            "points": points_kind(window_hours),
            "figures": figures_kind(window_hours),
            "runs": points[i],
            **figures[i],
        }
        for endpoint, i in zip(endpoints, ids, strict=True)
    ]


def _compare_runs(
    runs: Any,
    window: RunWindow | None,
    ids: list[int],
    workload: Workload | None,
    workloads: Workloads,
) -> tuple[dict[int, list[dict[str, Any]]], dict[int, dict[str, Any]]]:
    """compare_histories' run points and exact figures (profile, context, curve) per endpoint."""
    points, buckets = _compare_points(runs, window, ids, workload)
    curves: dict[int, list[dict[str, Any]]] = {i: [] for i in ids}
    if window is not None:
        for endpoint_id, *row in window.concurrency_rows(workloads.items, by_endpoint=True):
            curves[endpoint_id].append(_curve(*row))
    else:
        for (endpoint_id,), curve in _concurrency_rows(runs, ("endpoint_id",)):
            curves[endpoint_id].append(curve)
    contexts = _contexts(runs, window, workloads, ids)
    return points, {
        i: {
            "tod_profile": _profile_of(buckets[i]),
            "context": contexts[i],
            "concurrency": curves[i],
        }
        for i in ids
    }


def _compare_days(
    ids: list[int],
    workload: Workload | None,
    vantage: Vantage | None,
    hours: int,
    workloads: Workloads,
) -> tuple[dict[int, list[dict[str, Any]]], dict[int, dict[str, Any]]]:
    """compare_histories' day points and sketched figures (selectors.sketched) per endpoint."""
    if workload is None:
        series: dict[int, list[dict[str, Any]]] = {i: [] for i in ids}
    else:
        series = day_medians(ids, workload.id, vantage=vantage, window_hours=hours)
    found = sketched.history_figures(ids, workload, workloads, vantage=vantage, window_hours=hours)
    return series, {
        i: {key: found[i][key] for key in ("tod_profile", "context", "concurrency")} for i in ids
    }


def _compare_points(
    runs: Any, window: RunWindow | None, ids: list[int], workload: Workload | None
) -> tuple[dict[int, list[dict[str, Any]]], dict[int, list[tuple]]]:
    """compare_histories' run points of each endpoint ({slot, TTFT, decode}, as charted) and
    each point's (time-of-day bucket, TTFT, decode), for its profile."""
    points: dict[int, list[dict[str, Any]]] = {i: [] for i in ids}
    buckets: dict[int, list[tuple]] = {i: [] for i in ids}
    if workload:
        series = (
            window.compare_points(workload.id)
            if window is not None
            else runs.filter(workload=workload)
            .order_by("endpoint_id", "slot")
            .values_list(
                "endpoint_id", SlotIso("slot"), "tod_bucket", "ttft_p50_ms", "decode_tps_p50"
            )
        )
        for endpoint_id, slot, bucket, ttft, decode in series:
            points[endpoint_id].append({"slot": slot, "ttft_ms": ttft, "decode_tps": decode})
            buckets[endpoint_id].append((bucket, ttft, decode))
    return points, buckets


def _contexts(
    runs: Any, window: RunWindow | None, workloads: Workloads, ids: list[int]
) -> dict[int, dict[str, Any]]:
    """_context of each endpoint (without "pairs"), from one query."""
    base, long = workloads.base(), workloads.long()
    if base is None or long is None:
        return {i: {"context_tokens": None, "prefill_cost_ms": None} for i in ids}
    if window is not None:
        return _contexts_in_sql(window.slot_pairs(base, long), window.database, long, ids)
    # Paired in the database, one row per (endpoint, slot) without the slot itself (at most
    # one run of each workload per slot: run_unique_slot), so no timestamp is read.
    slots = (
        runs.filter(workload__in=[base, long])
        .order_by()
        .values("endpoint_id", "slot")
        .annotate(
            base=Max("ttft_p50_ms", filter=Q(workload=base)),
            long=Max("ttft_p50_ms", filter=Q(workload=long)),
        )
        .values_list("endpoint_id", "base", "long")
    )
    if connections[slots.db].vendor == "postgresql":
        inner = slots.query.get_compiler(slots.db).as_sql()
        return _contexts_in_sql(inner, slots.db, long, ids)
    pairs: dict[int, list[tuple]] = {i: [] for i in ids}
    for endpoint_id, base_ttft, long_ttft in slots:
        pairs[endpoint_id].append((base_ttft, long_ttft))
    return {i: _context_figures(pairs[i], long) for i in ids}


def _contexts_in_sql(
    slots: tuple[str, Any], database: str, long: Workload, ids: list[int]
) -> dict[int, dict[str, Any]]:
    """_context_figures of each endpoint's (endpoint_id, base, long) slot rows (a statement
    and its params), aggregated in PostgreSQL: one row per endpoint instead of one per slot
    (percentile_cont is the arithmetic of aggregates.quartiles/percentile, so the floats are
    the same)."""
    sql, params = slots
    quartiles = "percentile_cont(ARRAY[0.25, 0.5, 0.75]) WITHIN GROUP"
    # Built from the ORM's own SQL and constants; the values stay in params.
    outer = (
        f"SELECT p.endpoint_id, {quartiles} (ORDER BY p.base), "  # noqa: S608
        f"{quartiles} (ORDER BY p.long), "
        "percentile_cont(0.5) WITHIN GROUP (ORDER BY p.long - p.base), count(p.long - p.base) "
        f"FROM ({sql}) AS p GROUP BY 1"
    )
    with connections[database].cursor() as cursor:
        cursor.execute(outer, params)
        found = {row[0]: row[1:] for row in cursor.fetchall()}
    figures = {}
    for i in ids:
        base, lng, prefill, paired = found.get(i, (None, None, None, 0))
        figures[i] = {
            "context_tokens": long.context_tokens,
            "base_ttft_ms": _named(base),
            "long_ttft_ms": _named(lng),
            "prefill_cost_ms": prefill,
            "paired_slots": paired,
        }
    return figures


def _named(value: Any) -> dict[str, float | None]:
    low, mid, high = Quartiles.split(value)
    return {"p25": low, "p50": mid, "p75": high}


def _endpoint_info(endpoint: Endpoint) -> dict[str, Any]:
    price_in, price_out = endpoint.price_input_per_mtok, endpoint.price_output_per_mtok
    return {
        "id": endpoint.id,
        "slug": endpoint.slug,
        "label": endpoint.display_name or endpoint.model,
        "model": endpoint.model,
        "provider": endpoint.provider.name,
        "simulated": endpoint.provider.simulated,
        "enabled": endpoint.enabled and endpoint.provider.enabled,
        "price_in_per_mtok": float(price_in) if price_in is not None else None,
        "price_out_per_mtok": float(price_out) if price_out is not None else None,
    }


def _quartiles(values: list[float | None]) -> dict[str, float | None]:
    low, mid, high = quartiles([v for v in values if v is not None])
    return {"p25": low, "p50": mid, "p75": high}


def _summary(points: list[dict[str, Any]]) -> dict[str, Any]:
    ok = sum(p["ok"] for p in points)
    errors = sum(p["errors"] for p in points)
    return {
        "runs": len(points),
        "samples": ok + errors,
        "errors": errors,
        "saturated_runs": sum(1 for p in points if p["saturated"]),
        "error_rate": errors / (ok + errors) if ok + errors else None,
        "ttft_ms": _quartiles([p["ttft_ms"] for p in points]),
        "decode_tps": _quartiles([p["decode_tps"] for p in points]),
        "e2e_ms": _quartiles([p["e2e_ms"] for p in points]),
    }


def _tod_profile(points: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Median TTFT and decode per UTC time-of-day bucket: is it slower at peak hours?"""
    return _profile_of([(p["tod_bucket"], p["ttft_ms"], p["decode_tps"]) for p in points])


def _profile_of(points: list[tuple]) -> list[dict[str, Any]]:
    """_tod_profile of (time-of-day bucket, TTFT, decode) points, in one pass."""
    inside: dict[int, list[tuple]] = {bucket: [] for bucket in BUCKETS}
    for point in points:
        if point[0] in inside:
            inside[point[0]].append(point)
    return [
        {
            "bucket": bucket,
            "label": label,
            "runs": len(inside[bucket]),
            "ttft_ms": _quartiles([p[1] for p in inside[bucket]]),
            "decode_tps": _quartiles([p[2] for p in inside[bucket]]),
        }
        for bucket, label in BUCKETS.items()
    ]


def _context(runs: Any, window: RunWindow | None, workloads: Workloads) -> dict[str, Any]:
    """Base vs long-context TTFT per slot; prefill cost = median of paired differences."""
    base, long = workloads.base(), workloads.long()
    if base is None or long is None:
        return {"context_tokens": None, "pairs": [], "prefill_cost_ms": None}
    # Paired in the database, one row per slot in time order (at most one run of each
    # workload per slot: run_unique_slot), the slot as SlotIso text.
    slots = (
        window.context_pairs(base, long)
        if window is not None
        else runs.filter(workload__in=[base, long])
        .order_by("slot")
        .values("slot")
        .annotate(
            base=Max("ttft_p50_ms", filter=Q(workload=base)),
            long=Max("ttft_p50_ms", filter=Q(workload=long)),
        )
        .values_list(SlotIso("slot"), "base", "long")
    )
    pairs = [
        {"slot": iso(slot), "base_ttft_ms": base_ttft, "long_ttft_ms": long_ttft}
        for slot, base_ttft, long_ttft in slots
    ]
    values = [(p["base_ttft_ms"], p["long_ttft_ms"]) for p in pairs]
    return {"pairs": pairs, **_context_figures(values, long)}


def _context_figures(pairs: list[tuple[Any, Any]], long: Workload) -> dict[str, Any]:
    """_context's figures from each slot's (base TTFT, long-context TTFT), None when absent."""
    deltas = [lg - bs for bs, lg in pairs if lg is not None and bs is not None]
    return {
        "context_tokens": long.context_tokens,
        "base_ttft_ms": _quartiles([bs for bs, _ in pairs]),
        "long_ttft_ms": _quartiles([lg for _, lg in pairs]),
        "prefill_cost_ms": percentile(deltas, 0.5),
        "paired_slots": len(deltas),
    }


def _concurrency(runs: Any, window: RunWindow | None, workloads: Workloads) -> list[dict[str, Any]]:
    """Per-user decode and aggregate throughput by concurrency (base-context workloads)."""
    if window is not None:
        return [_curve(*row) for row in window.concurrency_rows(workloads.items, by_endpoint=False)]
    return [curve for _, curve in _concurrency_rows(runs, ())]


def _concurrency_rows(runs: Any, by: tuple[str, ...]) -> list[tuple[tuple, dict[str, Any]]]:
    """_concurrency's points, each with the values of the `by` columns it is grouped by too."""
    grouped = (
        runs.filter(workload__context_tokens=0)
        .order_by()
        .values(*by, "concurrency")
        .annotate(
            runs=Count("id"),
            saturated_runs=Count("id", filter=Q(saturated_count__gt=0)),
            decode=Percentile("decode_tps_p50", 0.5),
            throughput=Percentile("throughput_tps", 0.5),
            ttft=Percentile("ttft_p50_ms", 0.5),
        )
        .order_by(*by, "concurrency")
    )
    return [
        (
            tuple(g[name] for name in by),
            _curve(
                g["concurrency"],
                g["runs"],
                g["saturated_runs"],
                g["decode"],
                g["throughput"],
                g["ttft"],
            ),
        )
        for g in grouped
    ]


def _curve(
    concurrency: int,
    runs: int,
    saturated_runs: int,
    decode: float | None,
    throughput: float | None,
    ttft: float | None,
) -> dict[str, Any]:
    """A point of the concurrency curve."""
    return {
        "concurrency": concurrency,
        "runs": runs,
        "saturated_runs": saturated_runs,
        "decode_tps_per_user": decode,
        "throughput_tps": throughput,
        "ttft_ms": ttft,
    }


def _recent(
    endpoint: Endpoint, vantage: Vantage | None, window_hours: int, workloads: Workloads
) -> list[dict[str, Any]]:
    """The newest runs of any workload and status in the window (bounded by slot, so the
    scan stays within the window's index range however long the history)."""
    names = {w.id: w.name for w in workloads.items}
    slugs = {w.id: w.slug for w in workloads.items}
    return [
        {
            **run_point(run),
            "slot_label": f"{run['slot']:%Y-%m-%d %H:%M}",
            "workload": slugs[run["workload_id"]],
            "workload_name": names[run["workload_id"]],
        }
        for run in _recent_rows(endpoint.id, vantage, since(window_hours))
    ]


def _recent_rows(endpoint_id: int, vantage: Vantage | None, first: datetime) -> list[dict]:
    """_recent's runs as .values() gives them: on PostgreSQL by SQL written out (building the
    query through the ORM cost more than reading its twenty rows)."""
    database = connections[router.db_for_read(Run)]
    if database.vendor != "postgresql" or vantage is None:
        runs = Run.objects.filter(endpoint_id=endpoint_id, vantage=vantage, slot__gte=first)
        return list(runs.order_by("-slot", "workload_id").values(*_RECENT_FIELDS)[:RECENT_RUNS])
    # Column names and the table from the model; the values stay in params.
    sql = (
        f"SELECT {', '.join(_RECENT_FIELDS)} FROM {Run._meta.db_table} "  # noqa: S608
        "WHERE endpoint_id = %s AND vantage_id = %s AND slot >= %s "
        "ORDER BY slot DESC, workload_id LIMIT %s"
    )
    with database.cursor() as cursor:
        cursor.execute(sql, [endpoint_id, vantage.id, first, RECENT_RUNS])
        return [dict(zip(_RECENT_FIELDS, row, strict=True)) for row in cursor.fetchall()]


# A chart point's columns (without the summary: no band here) and the run's workload.
_RECENT_FIELDS = (*(f for f in RUN_POINT_FIELDS if f != "summary"), "workload_id")


def _roofline(endpoint: Endpoint, measured: float | None) -> dict[str, Any] | None:
    """measured: the median decode of the window's runs (the summary's)."""
    ceiling = endpoint.roofline_tps()
    if ceiling is None:
        return None
    return {
        "ceiling_tps": ceiling,
        "measured_tps": measured,
        "efficiency": measured / ceiling if measured is not None else None,
        "hardware": endpoint.hardware,
        "chips": endpoint.chips,
        "chip_bandwidth_tbps": endpoint.chip_bandwidth_tbps,
        "active_params_b": endpoint.active_params_b,
        "bytes_per_param": endpoint.bytes_per_param,
    }
