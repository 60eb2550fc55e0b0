"""Run the simulator until SIGINT/SIGTERM; used by `manage.py simulate`."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable

from aiohttp import web

from .server import build_app
from .sim_routes import BANNER


def listening_line(host: str, port: int) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"{BANNER} listening on http://{shown}:{port}"


async def serve(
    *, host: str, port: int, api_key: str | None, announce: Callable[[str], None]
) -> None:
    """Bind, call `announce` with the listening line, then serve until a stop signal."""
    # handler_cancellation: a client that goes away frees its stream (and its batching slot) now.
    runner = web.AppRunner(
        build_app(api_key=api_key),
        handler_cancellation=True,
        access_log=None,
        shutdown_timeout=1.0,  # stalled streams must not hold up a stop
    )
    await runner.setup()
    try:
        site = web.TCPSite(runner, host, port, backlog=1024)
        await site.start()
        bound_port = runner.addresses[0][1]
        announce(listening_line(host, bound_port))
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, stop.set)
        await stop.wait()
    finally:
        await runner.cleanup()
