"""Server errors: a database that is away is a 503 with Retry-After (it comes back), not a 500.

Django calls `server_error` while the exception is being handled, so it can tell a lost or
refused database connection from a bug.
"""

from __future__ import annotations

import sys

from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.defaults import server_error as django_server_error

RETRY_AFTER_S = 30
UNAVAILABLE = "The database is unavailable for a moment; try again shortly."


def server_error(request: HttpRequest) -> HttpResponse:
    if not isinstance(sys.exc_info()[1], OperationalError | InterfaceError):
        return django_server_error(request)
    if request.path.startswith("/api/"):
        response: HttpResponse = JsonResponse({"detail": UNAVAILABLE}, status=503)
    else:
        response = HttpResponse(UNAVAILABLE, status=503, content_type="text/plain; charset=utf-8")
    response["Retry-After"] = str(RETRY_AFTER_S)
    return response
