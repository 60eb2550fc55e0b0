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
    thresholds = gc.get_threshold()
    try:
        conf["post_worker_init"](object())
        frozen = gc.get_freeze_count()
        young, _, old = gc.get_threshold()
    finally:
        gc.unfreeze()
        gc.set_threshold(*thresholds)
    assert frozen > 10_000 and counted[0] >= frozen
    assert young == warm.GEN0_THRESHOLD > thresholds[0], "the youngest generation kept its default"
    assert old == warm.GEN2_THRESHOLD > thresholds[2], "full collections kept their default"
    assert "dashboard.views.compare" in sys.modules
    compiled = {key.split(":")[0] for key in loader.get_template_cache}
    assert {"dashboard/compare.html", "dashboard/endpoint.html", "base.html"} <= compiled
    # bench/gunicorn_load.py times nothing until every worker has said it is warm.
    assert f" warm: {counted[0]} objects frozen" in caplog.text
