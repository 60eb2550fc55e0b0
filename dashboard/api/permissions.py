"""Who may read and who may write (docs/design.md §9)."""

from django.conf import settings
from rest_framework.permissions import SAFE_METHODS, BasePermission

from ..roles import is_operator


def can_read(request) -> bool:
    """Anyone when TOKSPEED_PUBLIC_DASHBOARD is on (as for the dashboard), else a user."""
    return settings.TOKSPEED_PUBLIC_DASHBOARD or bool(
        request.user and request.user.is_authenticated
    )


def is_staff(request) -> bool:
    return bool(request.user and request.user.is_authenticated and request.user.is_staff)


class ReadPublicOrAuthenticated(BasePermission):
    """Reads follow the dashboard's setting; every write needs a staff user (session or token)."""

    message = "Writes need a staff user; reads need a login unless the dashboard is public."

    def has_permission(self, request, view) -> bool:
        if request.method in SAFE_METHODS:
            return can_read(request)
        return is_staff(request)


class CanTriggerRuns(ReadPublicOrAuthenticated):
    """Triggering a run costs money: operators only (staff or the "operators" group)."""

    message = 'Triggering a run needs a staff user or a member of the "operators" group.'

    def has_permission(self, request, view) -> bool:
        if request.method == "POST":
            return is_operator(request.user)
        return super().has_permission(request, view)


class ReadOrOperatorActs(BasePermission):
    """Alerts: reads follow the dashboard's setting; actions need an operator."""

    message = (
        'Acting on an alert needs a staff user or a member of the "operators" group; '
        "reads need a login unless the dashboard is public."
    )

    def has_permission(self, request, view) -> bool:
        if request.method in SAFE_METHODS:
            return can_read(request)
        return is_operator(request.user)
