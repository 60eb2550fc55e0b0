"""How the advisor writes figures in its one-line reasons."""

from __future__ import annotations


def seconds(value: float) -> str:
    """0.84 s, 6.8 s, 41 s, 3 min 5 s."""
    if value < 1:
        return f"{value:.2f} s"
    if value < 10:
        return f"{value:.1f} s"
    if value < 120:
        return f"{value:.0f} s"
    minutes, rest = divmod(round(value), 60)
    return f"{minutes} min {rest} s" if rest else f"{minutes} min"


def dollars(value: float) -> str:
    if abs(value) >= 100:
        return f"${value:,.0f}"
    if abs(value) >= 0.01:
        return f"${value:,.2f}"
    return f"${value:.4f}"
