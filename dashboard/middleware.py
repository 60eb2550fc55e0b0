"""A NUL byte in a query parameter is a 400 on every page and API URL, never a 500.

PostgreSQL refuses NUL in text, so a filter such as `?workload=%00` would otherwise reach the
database as an error. Checked once here rather than in each view's parameter parsing.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse, JsonResponse
from whitenoise.middleware import WhiteNoiseMiddleware

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
