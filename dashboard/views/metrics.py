"""/metrics for Prometheus: a bearer token (TOKSPEED_METRICS_TOKEN) or a logged-in user."""

from __future__ import annotations

import hmac

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from django.views.decorators.http import require_GET
from prometheus_client import CONTENT_TYPE_LATEST

from ..metrics import exposition


def _allowed(request: HttpRequest) -> bool:
    if request.user.is_authenticated:
        return True
    token = settings.TOKSPEED_METRICS_TOKEN
    given = request.headers.get("Authorization", "")
    if not token or not given.startswith("Bearer "):
        return False
    return hmac.compare_digest(given.removeprefix("Bearer ").strip().encode(), token.encode())


@require_GET
def metrics_view(request: HttpRequest) -> HttpResponse:
    if not _allowed(request):
        answer = HttpResponse(
            "Give Authorization: Bearer <TOKSPEED_METRICS_TOKEN>, or log in.\n",
            status=401,
            content_type="text/plain",
        )
        answer["WWW-Authenticate"] = 'Bearer realm="tokspeed metrics"'
        return answer
    return HttpResponse(exposition(timezone.now()), content_type=CONTENT_TYPE_LATEST)
