"""Start the simulator in a subprocess (`manage.py simulate`) and talk to its /_sim/ routes."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import TracebackType
from typing import Any

import httpx

MANAGE_PY = Path(__file__).resolve().parents[2] / "manage.py"
_LISTENING = re.compile(r"listening on (http://\S+)")


class SimulatorError(RuntimeError):
    """The simulator process did not start, or a /_sim/ call failed."""


class SimulatorHandle:
    """A running simulator process. URLs: `base_url` (Anthropic, Gemini), `openai_base`."""

    def __init__(self, process: subprocess.Popen[str], base_url: str) -> None:
        self.process = process
        self.base_url = base_url
        self.openai_base = base_url + "/v1"
        self._client = httpx.Client(base_url=base_url, timeout=10.0)

    def truth(self, request_id: str) -> dict[str, Any]:
        """The simulator's record of one request (see CONTRACTS.md); KeyError when unknown."""
        response = self._client.get(f"/_sim/requests/{request_id}")
        if response.status_code == 404:
            raise KeyError(request_id)
        response.raise_for_status()
        return response.json()

    def control(self, **factors: float) -> dict[str, float]:
        """Set runtime factors (speed_factor, ttft_factor); with no argument, read them."""
        if factors:
            response = self._client.post("/_sim/control", json=factors)
        else:
            response = self._client.get("/_sim/control")
        if response.status_code != 200:
            raise SimulatorError(f"control {factors}: {response.text}")
        return response.json()

    def reset(self) -> dict[str, float]:
        """Back to the profiles as defined (both factors 1.0)."""
        return self.control(speed_factor=1.0, ttft_factor=1.0)

    def stop(self, timeout_s: float = 5.0) -> None:
        self._client.close()
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def __enter__(self) -> SimulatorHandle:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def _read_listening_line(process: subprocess.Popen[str], timeout_s: float) -> str:
    """Wait for the listening line on stdout; keep draining stdout afterwards."""
    found: list[str] = []
    seen: list[str] = []
    ready = threading.Event()

    stdout = process.stdout
    if stdout is None:
        raise SimulatorError("the simulator was started without a stdout pipe")

    def pump() -> None:
        for line in stdout:
            if not found:
                seen.append(line.rstrip())
                match = _LISTENING.search(line)
                if match:
                    found.append(match.group(1))
                    ready.set()
        ready.set()  # EOF: the process ended

    threading.Thread(target=pump, name="simulator-stdout", daemon=True).start()
    if not ready.wait(timeout_s) or not found:
        process.kill()
        process.wait()
        output = "\n".join(seen[-20:])
        raise SimulatorError(f"the simulator did not start within {timeout_s:g} s: {output}")
    return found[0]


def start_simulator(
    *,
    port: int = 0,
    api_key: str | None = None,
    host: str = "127.0.0.1",
    timeout_s: float = 30.0,
) -> SimulatorHandle:
    """Run `manage.py simulate --port PORT` and return once it accepts requests.

    The key travels in the environment (TOKSPEED_SIM_API_KEY), never on the command line.
    """
    env = dict(os.environ)
    env.setdefault("DJANGO_SETTINGS_MODULE", "tokspeed.settings")
    env["PYTHONUNBUFFERED"] = "1"
    env.pop("TOKSPEED_SIM_API_KEY", None)
    if api_key:
        env["TOKSPEED_SIM_API_KEY"] = api_key
    process = subprocess.Popen(  # noqa: S603 - our own interpreter and manage.py
        [sys.executable, str(MANAGE_PY), "simulate", "--port", str(port), "--host", host],
        stdout=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        env=env,
        cwd=MANAGE_PY.parent,
    )
    started = time.monotonic()
    base_url = _read_listening_line(process, timeout_s)
    handle = SimulatorHandle(process, base_url)
    # The line is printed after bind+listen, so this first request only confirms it serves.
    while True:
        try:
            handle.control()
            return handle
        except httpx.TransportError as exc:
            if time.monotonic() - started > timeout_s:
                handle.stop()
                raise SimulatorError(f"the simulator at {base_url} does not answer") from exc
            time.sleep(0.05)
