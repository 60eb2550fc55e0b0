"""A NUL byte in a query parameter is a 400 on every page and API URL, never a 500.

PostgreSQL refuses NUL in text, so a filter such as `?workload=%00` would otherwise reach the
database as an error. Checked once here rather than in each view's parameter parsing.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from django.conf import settings
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse, JsonResponse
from whitenoise.middleware import WhiteNoiseMiddleware

from tokspeed.db_router import set_replica_reads

from .views.access import bad_request

NUL_MESSAGE = "Null characters are not allowed."


class RefuseNulQueryMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        bad = sorted(
            {
                name.replace("\x00", "\\0")
                for name, values in request.GET.lists()
                if "\x00" in name or any("\x00" in value for value in values)
            }
        )
        if not bad:
            return self.get_response(request)
        if request.path.startswith("/api/"):
            return JsonResponse({name: [NUL_MESSAGE] for name in bad}, status=400)
        return bad_request(request, ValidationError({name: [NUL_MESSAGE] for name in bad}))


class StaticFiles(WhiteNoiseMiddleware):
    """WhiteNoise without its warning when STATIC_ROOT is missing: `make run` and the tests serve
    static files through runserver, and production fills STATIC_ROOT with `collectstatic`."""

    def add_files(self, root: str, prefix: str | None = None) -> None:
        if self.autorefresh or os.path.isdir(root):
            super().add_files(root, prefix)


# Read-only views whose reads may come from the replica (URL names): boards, history, the
# runs list and the streamed CSV exports. Not here, so on the primary: run and alert pages and
# actions, subscriptions, the background exports list (it shows a job just asked for), admin.
REPLICA_VIEWS = frozenset(
    {
        "dashboard:leaderboard",
        "dashboard:endpoint",
        "dashboard:price",
        "dashboard:agent_loop",
        "dashboard:compare",
        "dashboard:runs",
        "api-leaderboard",
        "api-agent-loop",
        "endpoint-history",
        "run-list",
        "api-export-runs",
        "api-export-samples",
    }
)
PIN_COOKIE = "tokspeed_primary"
_SAFE = frozenset({"GET", "HEAD", "OPTIONS"})


class ReplicaReadsMiddleware:
    """Sends a read-only view's queries to the replica, unless this client wrote just now.

    Decided per request in process_view (the URL name is known there) and left set until the
    next request on this thread, so a streamed export body, read after the view returned, reads
    the replica too. Without DATABASE_REPLICA_URL there is no router and this changes nothing.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        set_replica_reads(False)  # sessions, login checks and the rest read the primary
        response = self.get_response(request)
        if request.method not in _SAFE and "replica" in settings.DATABASES:
            response.set_cookie(
                PIN_COOKIE,
                "1",
                max_age=settings.TOKSPEED_REPLICA_PIN_S,
                httponly=True,
                samesite="Lax",
                secure=settings.SESSION_COOKIE_SECURE,
            )
        return response

    def process_view(self, request: HttpRequest, *_: object) -> None:
        match = request.resolver_match
        set_replica_reads(
            request.method in ("GET", "HEAD")
            and match is not None
            and match.view_name in REPLICA_VIEWS
            and PIN_COOKIE not in request.COOKIES
        )
