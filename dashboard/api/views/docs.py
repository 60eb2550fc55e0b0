"""OpenAPI descriptions shared by several views (the leaderboard's filters, error shapes)."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter

from benchmarks.buckets import BUCKETS
from benchmarks.selectors.agent_loop import (
    DEFAULT_CALLS,
    DEFAULT_TOKENS_PER_CALL,
    DEFAULT_TOOL_S,
    MAX_CALLS,
    MAX_TOKENS_PER_CALL,
    MAX_TOOL_S,
)
from benchmarks.selectors.filters import DEFAULT_SORT, PEAK, SORT_KEYS, WINDOWS

from ...filters import RunFilter

_SORTS = [*SORT_KEYS, *(f"-{key}" for key in SORT_KEYS)]
_BUCKETS = ", ".join(f"{key} = {label}" for key, label in BUCKETS.items())

BOARD_PARAMETERS = [
    OpenApiParameter(
        "workload",
        str,
        description="Workload slug (default: the base workload, or with `concurrency` every "
        "base-context workload at that concurrency).",
    ),
    OpenApiParameter(
        "concurrency",
        str,
        description=f'Requests in flight: a whole number ≥ 1, "{PEAK}" or "any".',
        pattern=rf"^([0-9]+|{PEAK}|any)?$",
    ),
    OpenApiParameter(
        "tod",
        str,
        enum=[*(str(key) for key in BUCKETS), "all", ""],
        description=f"UTC time-of-day bucket: {_BUCKETS}; all (default).",
    ),
    OpenApiParameter(
        "window",
        str,
        enum=[*WINDOWS, ""],
        description="How far back runs count (default 72h).",
    ),
    OpenApiParameter("vantage", str, description="Vantage slug (default: the default vantage)."),
    # A blank value means the default, as a filter form submits it (enums list "" for that reason).
    OpenApiParameter(
        "sort",
        str,
        enum=[*_SORTS, ""],
        description=f"Column, best first (default {DEFAULT_SORT}); '-' reverses.",
    ),
]

# The leaderboard (and its CSV) only: an explicit window, e.g. one calendar month of the monthly
# report, whose figures are these same rows (docs/dashboard.md, "The monthly report").
WINDOW_BOUNDS_PARAMETERS = [
    OpenApiParameter(
        name,
        str,
        description=f"{what} (ISO 8601 date or date-time; without an offset in the install's "
        "time zone): runs with since ≤ slot < until, read exactly (`until` alone: the `window` "
        "before it).",
    )
    for name, what in (("since", "Window start, inclusive"), ("until", "Window end, exclusive"))
]

MODEL_PARAMETER = OpenApiParameter(
    "model",
    str,
    description='Model family, as in `model_family` (e.g. "Llama 3.3 70B"): only the '
    "endpoints serving that model, at every provider.",
)

AGENT_LOOP_PARAMETERS = [
    OpenApiParameter(
        "calls", int, description=f"Serial calls (default {DEFAULT_CALLS}; 1–{MAX_CALLS})."
    ),
    OpenApiParameter(
        "tokens_per_call",
        int,
        description=f"Output tokens per call (default {DEFAULT_TOKENS_PER_CALL}; "
        f"1–{MAX_TOKENS_PER_CALL}).",
    ),
    OpenApiParameter(
        "tool_s",
        float,
        description=f"Seconds of tool time per call (default {DEFAULT_TOOL_S:g}; 0–{MAX_TOOL_S}).",
    ),
]

_RUN_FILTER_TYPES = {"since": OpenApiTypes.DATETIME, "until": OpenApiTypes.DATETIME}
RUN_FILTER_PARAMETERS = [
    OpenApiParameter(
        name,
        _RUN_FILTER_TYPES.get(name, str),
        description=str(filter_.extra.get("help_text") or ""),
        enum=[value for value, _ in filter_.extra["choices"]]
        if "choices" in filter_.extra
        else None,
    )
    for name, filter_ in RunFilter.base_filters.items()
]
