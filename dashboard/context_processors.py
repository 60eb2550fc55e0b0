"""Template context every page gets (settings.TEMPLATES)."""

from django.conf import settings
from django.http import HttpRequest


def public_dashboard(request: HttpRequest) -> dict[str, bool]:
    """Whether anyone may read the dashboard (the login page words itself by it)."""
    return {"public_dashboard": settings.TOKSPEED_PUBLIC_DASHBOARD}
