"""The measurement core's public API (docs/design.md §4): one place that times streamed requests.

    async with make_client(limits=limits, max_connections=n) as client:
        m = await measure_request(client, config, prompt=p, max_tokens=2048, limits=limits)
        burst = await measure_burst(client, config, prompts=ps, max_tokens=2048, limits=limits)

Pieces: measurement.py (Measurement, Limits, SAMPLE_FIELDS), request.py (one request),
recorder.py (events → fields), timing.py (the arithmetic), burst.py (N at once); http/: the
stamping transport (connection.py sockets that stamp arrivals, http11.py, transport.py the client
and its pool, network.py proxies, CA bundles and which addresses may be used).
"""

from .burst import BurstResult, measure_burst
from .http.network import Network
from .http.transport import make_client
from .measurement import SAMPLE_FIELDS, Limits, Measurement
from .request import execute, measure_request, prepare_request

__all__ = [
    "SAMPLE_FIELDS",
    "BurstResult",
    "Limits",
    "Measurement",
    "Network",
    "execute",
    "make_client",
    "measure_burst",
    "measure_request",
    "prepare_request",
]
