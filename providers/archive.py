"""Deleting a provider or an endpoint archives it; purging is a separate, explicit act.

Archived: `archived_at` set and `enabled` off, so schedules skip it and boards hide it, while
its runs, samples and alerts stay for its history page and exports. Restoring undoes both.
Purging deletes the row and, by cascade, everything measured of it: only for what is already
archived, and only when the caller repeats the slug as its confirmation.
"""

from __future__ import annotations

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from .models import Endpoint, Provider

# Endpoints that are not archived and whose provider is not archived.
LIVE_ENDPOINTS = Q(archived_at__isnull=True, provider__archived_at__isnull=True)


class PurgeRefused(Exception):
    """Why a purge did not happen (said to the caller as a 400)."""


def archive(item: Provider | Endpoint) -> None:
    """Hide `item` (a provider hides its endpoints too) and stop measuring it; idempotent."""
    if item.archived_at is None:
        item.archived_at = timezone.now()
    item.enabled = False
    item.save(update_fields=["archived_at", "enabled"])


def restore(item: Provider | Endpoint) -> None:
    """Back on the boards and in the schedules, with all its history."""
    item.archived_at = None
    item.enabled = True
    item.save(update_fields=["archived_at", "enabled"])


def purge(item: Provider | Endpoint, *, confirm: str) -> dict[str, int]:
    """Delete an archived `item` and everything recorded of it; what was deleted, by model."""
    if item.archived_at is None:
        raise PurgeRefused(f"{item.slug} is not archived: DELETE it first (that keeps history).")
    if confirm != item.slug:
        raise PurgeRefused(f'Send {{"confirm": "{item.slug}"}} to purge it and all its history.')
    with transaction.atomic():
        _, deleted = item.delete()
    return {label.split(".")[-1]: count for label, count in deleted.items() if count}
