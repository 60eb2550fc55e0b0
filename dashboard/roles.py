"""Who may act: operators (staff, or members of the "operators" group) trigger runs and act on
alerts; every other user reads, and manages only their own subscriptions."""

from __future__ import annotations

OPERATORS_GROUP = "operators"  # made by dashboard's migration 0002


def is_operator(user) -> bool:
    if not (user and user.is_authenticated and user.is_active):
        return False
    return user.is_staff or user.groups.filter(name=OPERATORS_GROUP).exists()
