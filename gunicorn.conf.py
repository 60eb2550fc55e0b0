"""Production gunicorn settings (docs/operations.md: `gunicorn tokspeed.wsgi -c gunicorn.conf.py`).

Threaded workers: the worker's main loop keeps telling the arbiter it is alive while a thread
streams a long export, so `timeout` bounds a stuck worker, not a long download (a sync worker
is killed mid-response after `timeout` seconds, leaving the client a cut file). gunicorn's own
threaded worker, except that one whose threads are all busy leaves new connections to the
others (tokspeed/gunicorn_worker.py).
"""

import logging
import os

bind = os.environ.get("GUNICORN_BIND", "0.0.0.0:8000")
workers = int(os.environ.get("GUNICORN_WORKERS", "2"))
worker_class = "tokspeed.gunicorn_worker.BalancedThreadWorker"
threads = int(os.environ.get("GUNICORN_THREADS", "4"))
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "30"))
graceful_timeout = 30
keepalive = 5


def post_worker_init(worker: object) -> None:
    """Load what the first requests would and freeze the heap (tokspeed/warm.py): full garbage
    collections then skip the app's long-lived objects instead of walking them (75–100 ms each)."""
    from tokspeed.warm import warm_and_freeze

    frozen = warm_and_freeze()
    # Said once the worker takes requests (bench/gunicorn_load.py waits for every worker's).
    logging.getLogger("gunicorn.error").info(
        "worker %s warm: %d objects frozen", os.getpid(), frozen
    )
