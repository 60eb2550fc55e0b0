"""gunicorn's threaded worker, leaving new connections to other workers while its threads are busy.

Every gthread worker accepts any connection it wins, busy or not, and a client's keep-alive
connection then stays with that worker. Eight clients arriving together split between two
workers as a coin falls (4/4 only about a quarter of the time); the worker holding five or
six shares one interpreter lock among them while the other idles, and the reads' p95 under 8
clients moved by ±40 ms from one run to the next with the split.

Here a worker stops listening while each of its threads has a request (a connection just
accepted counts as one until it sends its request, for FRESH_S at most: a client that connects
and says nothing gives its place back at the worker's next wake, within about a second), and
listens again as soon as a thread is free. New connections wait in the kernel's queue for a
worker with a free thread, as they would for a sync worker; keep-alive connections are served
as before. Like gunicorn's own workers, it belongs behind a proxy where clients are not trusted.
"""

from __future__ import annotations

import errno
import selectors
import time
from functools import partial

from gunicorn.workers.gthread import TConn, ThreadWorker

FRESH_S = 0.25


class BalancedThreadWorker(ThreadWorker):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.claimed = 0  # threads' places taken: requests in flight and fresh connections
        self.fresh: dict[object, float] = {}  # connection → when it was accepted
        self.parked: list[tuple] = []  # (server, listener) not listened to while full

    def accept(self, server, listener):
        """ThreadWorker.accept, unless every thread's place is taken: then stop listening."""
        with self._lock:
            if self.claimed >= self.cfg.threads:
                self.poller.unregister(listener)
                self.parked.append((server, listener))
                return
        try:
            sock, client = listener.accept()
        except OSError as error:  # another worker took it, or the client left
            if error.errno not in (errno.EAGAIN, errno.ECONNABORTED, errno.EWOULDBLOCK):
                raise
            return
        conn = TConn(self.cfg, sock, client, server)
        self.nr_conns += 1
        with self._lock:
            self.claimed += 1
            self.fresh[conn] = time.monotonic()
            self.poller.register(
                conn.sock, selectors.EVENT_READ, partial(self.on_client_socket_readable, conn)
            )

    def enqueue_req(self, conn):
        with self._lock:
            if self.fresh.pop(conn, None) is None:
                self.claimed += 1  # a keep-alive connection's next request
        super().enqueue_req(conn)

    def finish_request(self, fs):
        super().finish_request(fs)
        with self._lock:
            self.claimed -= 1
            self._listen_if_free()

    def murder_keepalived(self):
        super().murder_keepalived()
        limit = time.monotonic() - FRESH_S
        with self._lock:
            for conn in [c for c, accepted in self.fresh.items() if accepted < limit]:
                del self.fresh[conn]  # silent so far: its place is given back
                self.claimed -= 1
            self._listen_if_free()

    def _listen_if_free(self) -> None:
        if self.parked and self.claimed < self.cfg.threads:
            for server, listener in self.parked:
                self.poller.register(listener, selectors.EVENT_READ, partial(self.accept, server))
            self.parked.clear()
