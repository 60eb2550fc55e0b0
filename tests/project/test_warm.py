"""A gunicorn worker loads what the first requests would, then freezes its heap
(tokspeed/warm.py): full garbage collections skip the app's long-lived objects."""

from __future__ import annotations

import gc
import runpy
import sys
from pathlib import Path

from django.template import engines

from tokspeed import warm

ROOT = Path(__file__).resolve().parents[2]


def test_a_gunicorn_worker_freezes_its_heap_with_the_views_and_templates_in_it(
    caplog, monkeypatch
) -> None:
    conf = runpy.run_path(str(ROOT / "gunicorn.conf.py"))
    # What the worker counted when it froze: a frozen object freed afterwards (an earlier test's
    # asyncio task reaped by the freeze's collection, say) lowers gc.get_freeze_count() later.
    counted: list[int] = []
    freeze = warm.warm_and_freeze

    def counting() -> int:
        counted.append(freeze())
        return counted[-1]

    monkeypatch.setattr(warm, "warm_and_freeze", counting)
    loader = engines["django"].engine.template_loaders[0]  # the cached loader
    loader.reset()
    gc.unfreeze()
    caplog.set_level("INFO", logger="gunicorn.error")
    try:
        conf["post_worker_init"](object())
        frozen = gc.get_freeze_count()
    finally:
        gc.unfreeze()
    assert frozen > 10_000 and counted[0] >= frozen
    assert "dashboard.views.compare" in sys.modules
    compiled = {key.split(":")[0] for key in loader.get_template_cache}
    assert {"dashboard/compare.html", "dashboard/endpoint.html", "base.html"} <= compiled
    # bench/gunicorn_load.py times nothing until every worker has said it is warm.
    assert f" warm: {counted[0]} objects frozen" in caplog.text


# A request's arrays: ten of 1 MB alive at once (under numpy's 4 MB huge-page threshold), then all
# freed; the minor page faults of the third such request, before and after keep_freed_memory.
_FAULTS = """
import resource
import numpy as np
from tokspeed.warm import keep_freed_memory

def request() -> None:
    arrays = [np.ones(2**17) for _ in range(10)]
    del arrays

def faults() -> int:
    request()
    request()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    request()
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before

untuned = faults()
kept = keep_freed_memory()
print(untuned, kept, faults())
"""


def test_a_worker_keeps_freed_memory_for_the_next_request_instead_of_faulting_it_in_again():
    """A read over hundreds of endpoints allocates arrays of megabytes; glibc gave them back to
    the kernel once freed, and the next request took a page fault per 4 kB to have them again."""
    import subprocess

    done = subprocess.run(  # noqa: S603  (this interpreter, a fixed script)
        [sys.executable, "-c", _FAULTS], capture_output=True, text=True, check=True, cwd=ROOT
    )
    untuned, kept, tuned = done.stdout.split()
    assert kept == "True"
    assert int(untuned) > 1_000, "the untuned request no longer faults: the test proves nothing"
    assert int(tuned) < 100
