"""A web worker's start: what the first requests would load, loaded before the first one, then
the heap frozen.

Python's full garbage collection walks every object the process holds; the app's modules,
URL patterns and compiled templates are most of them and live as long as the process, yet each
full collection (one every few requests under load) walked them all again: about 75–100 ms,
charged to whichever request was running. `gc.freeze()` moves the objects alive at that moment
out of the collector's sight. Frozen right after start-up, the views, URL patterns and
templates the first requests load were still outside the frozen set (half the heap), so they
are loaded first: then a full collection walks only what requests made since (a few ms).

The youngest generation is collected every GEN0_THRESHOLD allocations instead of Python's 700:
a read of a year of history makes tens of thousands of short-lived objects (rows, dicts,
floats), and a collection every 700 of them walked the young ones again and again (the 8-client
p50 of the compare page at 365 days, 4× data: 173 → 165 ms). A full collection waits for
GEN2_THRESHOLD collections of the middle generation instead of 10: each walks everything the
process has kept since its start (its caches of days and boards), and at 4× data the reads'
8-client p95 carried them (one run each, the default against these: leaderboard page 30 d 252 →
174 ms, leaderboard page 365 d 220 → 160, compare page 365 d 252 → 211). Cycles still go at the
middle generation's collections; only those outliving it wait longer.
"""

from __future__ import annotations

import gc
from pathlib import Path

from django.conf import settings
from django.template import engines
from django.urls import get_resolver


def project_templates() -> list[str]:
    """The names of the templates under the project's own template folders (settings.BASE_DIR):
    the ones pages render; Django's and the libraries' own (admin, forms) load on first use."""
    base = Path(settings.BASE_DIR).resolve()
    names: set[str] = set()
    for engine in engines.all():
        for folder in engine.template_dirs:
            root = Path(folder).resolve()
            if root.is_relative_to(base) and root.is_dir() and ".venv" not in root.parts:
                names.update(str(p.relative_to(root)) for p in root.rglob("*.html"))
    return sorted(names)


GEN0_THRESHOLD = 20_000
GEN2_THRESHOLD = 100


def warm_and_freeze() -> int:
    """Import every view (through the URL conf), compile the project's templates, then collect
    and freeze the heap, and collect the youngest and the oldest generation less often; the
    number of objects frozen."""
    get_resolver().url_patterns  # noqa: B018 - imports the URL conf and every view it names
    _compile(project_templates())  # (its list freed before the freeze, not frozen and then freed)
    gc.collect()
    gc.freeze()
    gc.set_threshold(GEN0_THRESHOLD, gc.get_threshold()[1], GEN2_THRESHOLD)
    return gc.get_freeze_count()


def _compile(names: list[str]) -> None:
    """Compile each template into every engine's cache."""
    for engine in engines.all():
        for name in names:
            engine.get_template(name)
