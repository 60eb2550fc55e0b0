"""A web worker's start: what the first requests would load, loaded before the first one, then
the heap frozen.

Python's full garbage collection walks every object the process holds; the app's modules,
URL patterns and compiled templates are most of them and live as long as the process, yet each
full collection (one every few requests under load) walked them all again: about 75–100 ms,
charged to whichever request was running. `gc.freeze()` moves the objects alive at that moment
out of the collector's sight. Frozen right after start-up, the views, URL patterns and
templates the first requests load were still outside the frozen set (half the heap), so they
are loaded first: then a full collection walks only what requests made since (a few ms).

The worker's allocator is told to keep freed memory too (`keep_freed_memory`): see there.
"""

from __future__ import annotations

import ctypes
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


# glibc's malloc maps each block past its mmap threshold (128 kB, raised to the largest block
# freed since, at most 32 MB) fresh from the kernel and unmaps it when freed, and trims the
# heap's free top past twice that threshold: the arrays of a read over hundreds of endpoints
# (0.1–7 MB each, a cold advice's ~2,000 pages of them) were new pages every request, each one
# a page fault (~10 % of a cold advice's CPU at 400 endpoints). Fixed thresholds keep blocks up to
# MMAP_THRESHOLD in the heap, and up to TRIM_THRESHOLD of it free for the next request.
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # glibc's malloc.h
MMAP_THRESHOLD = 64 * 2**20
TRIM_THRESHOLD = 128 * 2**20


def keep_freed_memory() -> bool:
    """Set glibc's mmap and trim thresholds (above); False where the C library has no mallopt
    (musl, macOS): nothing to tune there."""
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(
        mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD)
    )


def warm_and_freeze() -> int:
    """Keep freed memory in the heap (keep_freed_memory), import every view (through the URL
    conf), compile the project's templates, then collect and freeze the heap; the number of
    objects frozen."""
    keep_freed_memory()
    get_resolver().url_patterns  # noqa: B018 - imports the URL conf and every view it names
    _compile(project_templates())  # (its list freed before the freeze, not frozen and then freed)
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()


def _compile(names: list[str]) -> None:
    """Compile each template into every engine's cache."""
    for engine in engines.all():
        for name in names:
            engine.get_template(name)
