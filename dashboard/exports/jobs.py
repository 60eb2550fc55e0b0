"""Background exports: request, build (claimed once), email the link, expire.

The claim is `dispatch.py`'s: a conditional UPDATE from pending to running, so two workers
(or a redelivered message) never build one export twice.
"""

import hashlib
import logging
import math
import uuid
from datetime import datetime, timedelta
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.core.mail import send_mail
from django.db import transaction
from django.db.models import QuerySet
from django.urls import reverse
from django.utils import timezone

from benchmarks.models import Export, ExportStatus, Run

from ..csv_rows import run_rows, sample_rows
from ..filters import RunFilter
from .files import write_csv_gz, write_parquet

log = logging.getLogger(__name__)


def export_dir() -> Path:
    folder = Path(settings.TOKSPEED_EXPORT_DIR)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


class QuotaExceeded(Exception):
    """A user asked for more exports than TOKSPEED_EXPORT_MAX_ACTIVE_PER_USER (pending or
    running at once) or TOKSPEED_EXPORT_MAX_PER_HOUR_PER_USER allow; `retry_after_s` says
    when the next one would be accepted."""

    def __init__(self, message: str, retry_after_s: int) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


# An export in progress is usually done within seconds; ask again after this.
ACTIVE_RETRY_S = 30


def check_quota(user_id: int, *, now: datetime) -> None:
    """Raise QuotaExceeded when one more export by this user would pass a quota."""
    mine = Export.objects.filter(requested_by_id=user_id)
    active_cap = settings.TOKSPEED_EXPORT_MAX_ACTIVE_PER_USER
    if mine.filter(status__in=[ExportStatus.PENDING, ExportStatus.RUNNING]).count() >= active_cap:
        raise QuotaExceeded(
            f"You have {active_cap} exports in progress (the most at once): wait for one "
            "to finish, then ask again.",
            ACTIVE_RETRY_S,
        )
    hourly_cap = settings.TOKSPEED_EXPORT_MAX_PER_HOUR_PER_USER
    hour = mine.filter(created_at__gt=now - timedelta(hours=1)).order_by("-created_at")
    recent = list(hour.values_list("created_at", flat=True)[:hourly_cap])
    if len(recent) >= hourly_cap:
        # The oldest of the last `hourly_cap` leaves the hour window first.
        free_at = recent[-1] + timedelta(hours=1)
        wait = max(1, math.ceil((free_at - now).total_seconds()))
        raise QuotaExceeded(
            f"You asked for {hourly_cap} exports in the last hour (the most an hour): "
            f"the next one is accepted in {wait} s.",
            wait,
        )


def request_export(
    *, kind: str, file_format: str, filters: dict[str, str], user: AbstractBaseUser | None
) -> Export:
    """A pending export of the runs matching `filters` (already validated by RunFilter).

    A signed-in user's exports are capped (check_quota; QuotaExceeded past it). The user's row
    is locked while counting, so parallel requests of one user are counted one after another.
    """
    signed_in = user is not None and user.is_authenticated
    with transaction.atomic():
        if signed_in:
            get_user_model().objects.select_for_update().filter(pk=user.pk).first()
            check_quota(user.pk, now=timezone.now())
        return Export.objects.create(
            kind=kind,
            file_format=file_format,
            filters=filters,
            requested_by=user if signed_in else None,
            email=getattr(user, "email", "") if signed_in else "",
            token=uuid.uuid4(),
        )


def matching_runs(filters: dict[str, str]) -> QuerySet[Run]:
    filterset = RunFilter(data=filters, queryset=Run.objects.all())
    if not filterset.is_valid():
        raise ValueError(f"invalid filters: {dict(filterset.errors)}")
    return filterset.qs


def build(export_id: int, *, now: datetime | None = None) -> bool:
    """Write the file of one pending export; False when it was not ours (already claimed)."""
    now = now or timezone.now()
    claimed = Export.objects.filter(id=export_id, status=ExportStatus.PENDING).update(
        status=ExportStatus.RUNNING, started_at=now
    )
    if not claimed:
        return False
    export = Export.objects.get(id=export_id)
    name = f"tokspeed-{export.kind}-{export.token}.{export.file_format}"
    path = export_dir() / name
    partial = path.with_suffix(path.suffix + ".partial")
    try:
        runs = matching_runs(export.filters)
        header, rows = (run_rows if export.kind == "runs" else sample_rows)(runs)
        writer = write_parquet if export.file_format == "parquet" else write_csv_gz
        count = writer(partial, header, rows)
        # Renamed only once complete: a file under its final name is always whole.
        partial.replace(path)
    except Exception as exc:
        partial.unlink(missing_ok=True)
        log.exception("export %s failed", export_id)
        Export.objects.filter(id=export_id).update(
            status=ExportStatus.FAILED, finished_at=timezone.now(), error=str(exc)[:2000]
        )
        return True
    finished = timezone.now()
    Export.objects.filter(id=export_id).update(
        status=ExportStatus.DONE,
        finished_at=finished,
        expires_at=finished + timedelta(hours=settings.TOKSPEED_EXPORT_KEEP_HOURS),
        rows=count,
        size_bytes=path.stat().st_size,
        sha256=_sha256(path),
        file_name=name,
    )
    export.refresh_from_db()
    if export.email:
        _email(export)
    return True


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        while chunk := stream.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def download_url(export: Export) -> str:
    return settings.TOKSPEED_BASE_URL + reverse("api-export-download", args=[export.token])


def _email(export: Export) -> None:
    body = (
        f"Your tokspeed export of {export.kind} is ready: {export.rows:,} rows, "
        f"{export.size_bytes:,} bytes ({export.get_file_format_display()}).\n\n"
        f"Download: {download_url(export)}\n"
        f"SHA-256: {export.sha256}\n\n"
        f"The link expires at {export.expires_at:%Y-%m-%d %H:%M} UTC.\n"
    )
    send_mail(
        f"tokspeed: your {export.kind} export is ready",
        body,
        settings.DEFAULT_FROM_EMAIL,
        [export.email],
    )


def pending(*, older_than: datetime) -> list[int]:
    """Exports still pending after a while: their message was lost; build them anyway."""
    return list(
        Export.objects.filter(status=ExportStatus.PENDING, created_at__lt=older_than).values_list(
            "id", flat=True
        )
    )


def expire(*, now: datetime | None = None) -> int:
    """Delete the files and rows of exports past their expiry; the number deleted."""
    now = now or timezone.now()
    done = 0
    for export in Export.objects.filter(expires_at__lte=now):
        if export.file_name:
            (export_dir() / export.file_name).unlink(missing_ok=True)
        done += Export.objects.filter(id=export.id, expires_at__lte=now).delete()[0]
    return done
