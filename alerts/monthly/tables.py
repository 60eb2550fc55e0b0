"""The report as text cells: one wording for the page, the email and its plain-text view."""

from __future__ import annotations

from benchmarks.money import usd_text

from .report import EndpointMonth, Figures, MonthlyReport, Winners

ENDPOINT_HEADER = [
    "Endpoint",
    "Lane",
    "Price in / out per 1M",
    "TTFT p50 (p25–p75)",
    "Month before (change)",
    "Decode p50 (p25–p75)",
    "Month before (change)",
    "Availability",
    "Month before",
    "$ / request",
    "Month before",
]
WINNER_HEADER = ["", "Fastest decode", "Fastest first token"]


def ms(value: float | None) -> str:
    return "–" if value is None else f"{value:,.0f} ms"


def tps(value: float | None) -> str:
    return "–" if value is None else f"{value:,.1f} tok/s"


def share(value: float | None) -> str:
    return "–" if value is None else f"{value:.1%}"


def money(value: float | None) -> str:
    """Fixed decimals (benchmarks.money), trailing zeros after the cents dropped."""
    if value is None:
        return "–"
    whole, cents = usd_text(value).split(".")
    return f"${whole}.{cents[:2]}{cents[2:].rstrip('0')}"


def changed(value: float | None) -> str:
    return "" if value is None else f" ({value:+.0%})"


def ttft(figures: Figures) -> str:
    if figures.ttft_p50_ms is None:
        return "–"
    return f"{ms(figures.ttft_p50_ms)} ({figures.ttft_p25_ms:,.0f}–{figures.ttft_p75_ms:,.0f})"


def decode(figures: Figures) -> str:
    if figures.decode_tps_p50 is None:
        return "–"
    low, high = figures.decode_tps_p25, figures.decode_tps_p75
    text = f"{tps(figures.decode_tps_p50)} ({low:,.1f}–{high:,.1f})"
    if figures.saturated_runs:  # docs/design.md §4: a saturated client is said wherever shown
        runs = figures.runs
        text += f" · client saturated in {figures.saturated_runs} of {runs} run{'s' * (runs != 1)}"
    return text


def endpoint_cells(e: EndpointMonth) -> list[str]:
    return [
        e.name,
        e.lane,
        f"{money(e.price_in_per_mtok)} / {money(e.price_out_per_mtok)}",
        ttft(e.month),
        ttft(e.before) + changed(e.ttft_change),
        decode(e.month),
        decode(e.before) + changed(e.decode_change),
        share(e.month.availability),
        share(e.before.availability),
        money(e.month.cost_per_request_usd),
        money(e.before.cost_per_request_usd),
    ]


def winner_cells(w: Winners) -> list[str]:
    decode_text = " = ".join(w.decode) + f" ({tps(w.decode_tps)})" if w.decode else "–"
    ttft_text = " = ".join(w.ttft) + f" ({ms(w.ttft_ms)})" if w.ttft else "–"
    return [w.scope, decode_text, ttft_text]


# Past the endpoint, its lane and its prices, each figure's column is followed by the month
# before's.
FIGURE_COLUMNS = range(3, len(ENDPOINT_HEADER), 2)


def cards(rows: list[list[str]]) -> list[dict[str, object]]:
    """The endpoint table's rows stacked for the email (a phone's 390 px holds two columns, not
    eleven): the endpoint, its lane and prices, then each figure with the month before's under
    it, in the table's own wording."""
    return [
        {
            "endpoint": row[0],
            "lane": row[1],
            "prices": row[2],
            "lines": [(ENDPOINT_HEADER[i], row[i], row[i + 1]) for i in FIGURE_COLUMNS],
        }
        for row in rows
    ]


def tables(report: MonthlyReport) -> dict[str, list[list[str]]]:
    return {
        "endpoints": [endpoint_cells(e) for e in report.endpoints],
        "workloads": [winner_cells(w) for w in report.workloads],
        "times_of_day": [winner_cells(w) for w in report.times_of_day],
    }
