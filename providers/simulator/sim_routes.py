"""Routes beside the protocols: model lists, runtime controls and the truth records."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from aiohttp import web

from .plan import Controls
from .profiles import PROFILES
from .stream import Simulation
from .truth import TruthStore

BANNER = "tokspeed simulator (simulated providers)"


def _json(data: Any, status: int = 200) -> web.Response:
    return web.Response(status=status, text=json.dumps(data), content_type="application/json")


async def index(request: web.Request) -> web.Response:
    lines = [BANNER, "", "profiles (model = profile[+option=value...]):"]
    lines += [f"  {p.name}: {p.description}" for p in PROFILES.values()]
    return web.Response(text="\n".join(lines) + "\n")


async def openai_models(request: web.Request) -> web.Response:
    if "anthropic-version" in request.headers:
        data = [
            {
                "type": "model",
                "id": name,
                "display_name": f"{name} (simulated)",
                "created_at": "2025-01-01T00:00:00Z",
            }
            for name in PROFILES
        ]
        return _json(
            {"data": data, "has_more": False, "first_id": data[0]["id"], "last_id": data[-1]["id"]}
        )
    data = [
        {"id": name, "object": "model", "created": 0, "owned_by": "tokspeed-simulated"}
        for name in PROFILES
    ]
    return _json({"object": "list", "data": data})


async def gemini_models(request: web.Request) -> web.Response:
    models = [
        {
            "name": f"models/{p.name}",
            "displayName": f"{p.name} (simulated)",
            "description": f"tokspeed simulator: {p.description}",
            "supportedGenerationMethods": ["generateContent", "streamGenerateContent"],
        }
        for p in PROFILES.values()
    ]
    return _json({"models": models})


def add_sim_routes(
    app: web.Application,
    *,
    sim_key: web.AppKey[Simulation],
    truth_key: web.AppKey[TruthStore],
) -> None:
    async def get_control(request: web.Request) -> web.Response:
        return _json(dataclasses.asdict(request.app[sim_key].controls))

    async def post_control(request: web.Request) -> web.Response:
        try:
            body = json.loads(await request.read())
        except (ValueError, UnicodeDecodeError):
            return _json({"error": "the body must be a JSON object"}, 400)
        if not isinstance(body, dict):
            return _json({"error": "the body must be a JSON object"}, 400)
        allowed = {f.name for f in dataclasses.fields(Controls)}
        unknown = sorted(set(body) - allowed)
        if unknown:
            return _json({"error": f"unknown controls {unknown}; known: {sorted(allowed)}"}, 400)
        for name, value in body.items():
            ok = isinstance(value, int | float) and not isinstance(value, bool)
            if not ok or not 0 < value < float("inf"):
                return _json({"error": f"{name} must be a positive number, got {value!r}"}, 400)
        sim = request.app[sim_key]
        sim.controls = dataclasses.replace(
            sim.controls, **{name: float(value) for name, value in body.items()}
        )
        return _json(dataclasses.asdict(sim.controls))

    async def truth(request: web.Request) -> web.Response:
        record = request.app[truth_key].get(request.match_info["request_id"])
        if record is None:
            return _json({"error": "unknown request id (the last 10,000 are kept)"}, 404)
        return _json(record.as_dict())

    app.router.add_get("/", index)
    app.router.add_get("/v1/models", openai_models)
    app.router.add_get("/v1beta/models", gemini_models)
    app.router.add_get("/_sim/control", get_control)
    app.router.add_post("/_sim/control", post_control)
    app.router.add_get("/_sim/requests/{request_id}", truth)
