"""/health/ for load balancers and uptime checks: 200 when every part is well, else 503.

No login, and nothing secret in the answer: check names, ok flags and short details.
"""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

from alerts import health as alert_health
from benchmarks import health


@never_cache
@require_safe
def health_view(request: HttpRequest) -> JsonResponse:
    now = timezone.now()
    found = health.checks(now)
    if found[0].ok:  # the outbox is read from the database
        found.append(alert_health.outbox(now))
    failing = [check.name for check in found if not check.ok]
    body = {
        "status": "fail" if failing else "ok",
        "failing": failing,
        "checks": {c.name: {"ok": c.ok, "detail": c.detail} for c in found},
    }
    return JsonResponse(body, status=503 if failing else 200)
