"""A generated Batch as database rows: Run columns (with summaries) and Sample columns."""

from datetime import timedelta
from typing import Any

import numpy as np
from django.db import models

from ..buckets import tod_bucket
from ..measure.measurement import SAMPLE_FIELDS
from ..models import RunStatus, Sample
from ..stats import all_requests, median
from .generate import ERROR_STATUS, ERRORS, Batch, to_datetimes
from .summaries import summaries

CLIENT_VERSION = "synthetic"
MESSAGE = "Synthetic {} (seeded history, not a real response)."


def nullable(values: np.ndarray) -> list[float | None]:
    return [None if v != v else v for v in values.astype(np.float64).tolist()]  # NaN → NULL


def nullable_int(values: np.ndarray) -> list[int | None]:
    return [None if v != v else int(v) for v in values.astype(np.float64).tolist()]


def _status(ok: int, summary: dict) -> tuple[str, str]:
    stored = summary["samples"]
    categories = ", ".join(f"{n} × {c}" for c, n in summary["errors_by_category"].items())
    if ok == 0:
        return RunStatus.FAILED, f"{all_requests(stored)} failed ({categories})."
    if ok < stored:
        return RunStatus.PARTIAL, f"{stored - ok} of {stored} requests failed ({categories})."
    return RunStatus.DONE, ""


def run_columns(batch: Batch, *, endpoint_id: int, vantage_id: int) -> dict[str, list[Any]]:
    """Run rows. Aggregate throughput is modelled for the full concurrency (only k samples of a
    run are stored): repetitions × concurrency × tokens of ok requests ÷ the run's wall time."""
    runs, k = batch.run_count, batch.samples_per_run
    ok = (batch.samples["error"] < 0).reshape(runs, k)
    tokens = batch.samples["output_tokens"].reshape(runs, k)
    total_s = batch.samples["total_ms"].reshape(runs, k) / 1000
    repetitions = batch.runs["repetitions"].astype(np.float64)
    wall_s = repetitions * np.nanmax(total_s, axis=1)
    with np.errstate(invalid="ignore"):
        mean_tokens = np.where(ok.any(axis=1), np.nansum(tokens, axis=1) / ok.sum(axis=1), 0.0)
    throughput = repetitions * batch.runs["concurrency"] * ok.mean(axis=1) * mean_tokens / wall_s
    described = summaries(batch, wall_s=wall_s, throughput=throughput)
    slots = to_datetimes(batch.runs["slot"])
    columns: dict[str, list[Any]] = {name: [] for name in _RUN_FIELDS}
    for r, (slot, summary) in enumerate(zip(slots, described, strict=True)):
        summary |= {
            "input_tokens_sent": int(batch.runs["input_tokens"][r]),
            "input_tokens_source": "estimate",
            "concurrency": int(batch.runs["concurrency"][r]),
            "repetitions": int(batch.runs["repetitions"][r]),
            "client_version": CLIENT_VERSION,
            "synthetic": True,
        }
        status, reason = _status(summary["ok"], summary)
        finished = slot + timedelta(seconds=0.5 + float(wall_s[r]))
        values = (
            endpoint_id, int(batch.runs["workload_id"][r]), vantage_id, slot, status, reason,
            slot, slot + timedelta(seconds=0.5), finished, finished, slot, 1, CLIENT_VERSION,
            int(batch.runs["concurrency"][r]), int(batch.runs["repetitions"][r]),
            int(batch.runs["context_tokens"][r]), tod_bucket(slot), CLIENT_VERSION,
            summary["input_tokens_sent"], summary["ok"], summary["errors"],
            median(summary, "ttft_ms"), median(summary, "ttfa_ms"),
            median(summary, "decode_tps"), median(summary, "total_ms"),
            median(summary, "output_tokens"), summary["throughput_tps"], summary,
        )  # fmt: skip
        for name, value in zip(_RUN_FIELDS, values, strict=True):
            columns[name].append(value)
    return columns


_RUN_FIELDS = (
    "endpoint_id", "workload_id", "vantage_id", "slot", "status", "failure_reason",
    "created_at", "started_at", "finished_at", "heartbeat_at", "enqueued_at", "attempts",
    "worker", "concurrency", "repetitions", "context_tokens", "tod_bucket", "client_version",
    "input_tokens", "ok_count", "error_count", "ttft_p50_ms", "ttfa_p50_ms", "decode_tps_p50",
    "e2e_p50_ms", "output_tokens_p50", "throughput_tps", "summary",
)  # fmt: skip


# The §4 sample fields (measurement.SAMPLE_FIELDS) that the generator leaves NaN where nothing
# was measured, by column type: float measurements, and token counts (nullable integers).
_SAMPLE_MODEL_FIELDS = {name: Sample._meta.get_field(name) for name in SAMPLE_FIELDS}
_MEASURED = tuple(n for n, f in _SAMPLE_MODEL_FIELDS.items() if isinstance(f, models.FloatField))
_COUNTS = tuple(
    n
    for n, f in _SAMPLE_MODEL_FIELDS.items()
    if isinstance(f, models.PositiveIntegerField) and f.null
)


def sample_columns(batch: Batch, run_ids: list[int]) -> dict[str, list[Any]]:
    s = batch.samples
    error = s["error"]
    ok = error < 0
    names = np.array(["", *ERRORS], dtype=object)[error + 1]
    status = np.array([200, *(ERROR_STATUS.get(c) for c in ERRORS)], dtype=object)[error + 1]
    return {
        "run_id": np.repeat(np.asarray(run_ids), batch.samples_per_run).tolist(),
        "slot": np.repeat(
            np.asarray(to_datetimes(batch.runs["slot"]), dtype=object), batch.samples_per_run
        ).tolist(),
        "index": s["index"].tolist(),
        "started_at": to_datetimes(s["started_at"]),
        **{name: nullable(s[name]) for name in _MEASURED},
        **{name: nullable_int(s[name]) for name in _COUNTS},
        "chunks": s["chunks"].astype(int).tolist(),
        "output_chars": s["output_chars"].astype(int).tolist(),
        "tokens_source": np.where(ok, "usage", "").tolist(),
        "finish_reason": np.where(ok, np.where(s["truncated"], "length", "stop"), "").tolist(),
        "outcome": np.where(s["truncated"], "truncated", "").tolist(),
        "http_status": status.tolist(),
        "error_category": names.tolist(),
        "error_message": [MESSAGE.format(name) if name else "" for name in names.tolist()],
    }
