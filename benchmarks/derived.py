"""What is derived from the runs, and the one way to build it all again.

Stores computed from Run rows (never measured themselves) register here with a function that
builds them again from the runs: the long windows' rollups (benchmarks, below), the advisor's run
digest (advisor.apps), and whatever comes next. `manage.py rebuild_derived` and `seed_history`
(seeded runs skip finish_run) call `rebuild_all`, so a new store is rebuilt everywhere by
registering once. An app above benchmarks registers from its AppConfig.ready().
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True, slots=True)
class Derived:
    """A derived store: its name and how to build it from the runs (returns rows written)."""

    name: str
    rebuild: Callable[[datetime], int]
    description: str


@dataclass(frozen=True, slots=True)
class Rebuilt:
    name: str
    rows: int
    seconds: float


_REGISTRY: dict[str, Derived] = {}


def register(name: str, rebuild: Callable[[datetime], int], *, description: str) -> None:
    """Add (or replace, on a second ready()) the store `name`; rebuilt in registration order."""
    _REGISTRY[name] = Derived(name=name, rebuild=rebuild, description=description)


def registered() -> list[Derived]:
    return list(_REGISTRY.values())


def rebuild_all(*, now: datetime, only: Iterable[str] | None = None) -> list[Rebuilt]:
    """Build every registered store (or those named in `only`) again from the runs."""
    wanted = None if only is None else set(only)
    unknown = (wanted or set()) - set(_REGISTRY)
    if unknown:
        raise KeyError(f"no derived store named {', '.join(sorted(unknown))}")
    done = []
    for store in registered():
        if wanted is not None and store.name not in wanted:
            continue
        started = time.perf_counter()
        rows = store.rebuild(now)
        done.append(Rebuilt(store.name, rows, time.perf_counter() - started))
    return done


def _rollups(now: datetime) -> int:
    from .rollups import windows, write

    return write.rebuild() + windows.refresh(today=now.date(), force=True)


register(
    "rollups",
    _rollups,
    description="the long windows' rollups: per endpoint × workload × concurrency × vantage × "
    "UTC day and month × time-of-day bucket (counts, error tallies, quantile sketches)",
)


def _board(now: datetime) -> int:
    from .selectors import materialized_write

    return materialized_write.rebuild(now)


register(
    "board",
    _board,
    description="the long-window board's final figures per vantage × window × time-of-day "
    "bucket × filter × endpoint, merged from the rollups (selectors.materialized)",
)


def _window_board(now: datetime) -> int:
    from .selectors import window_figures_write

    return window_figures_write.rebuild(now)


register(
    "window-board",
    _window_board,
    description="the 72 h / 7 d boards' exact figures per vantage × window × time-of-day "
    "bucket × filter × endpoint, computed from the runs (selectors.window_figures)",
)
