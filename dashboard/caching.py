"""Conditional GETs and a shared response cache for the read API and dashboard pages.

A view's validator is the newest finished run (benchmarks.freshness) and the alert state
(the newest alert change and the number of alerts): ETag and Last-Modified come from it, a
client holding the same answers 304, and a response is kept in the shared cache (CACHES
"default": Redis or the database table, shared by every worker) under a key naming the
validator, so a run finishing or an alert changing retires every cached view at once.

The key also names who asks (user, Authorization header, CSRF cookie: a page may embed a
token) and what they accept, so no one is served a response rendered for someone else.
"""

import hashlib
import logging
from collections.abc import Callable
from datetime import UTC, datetime
from functools import wraps

from django.conf import settings
from django.core.cache import cache
from django.db import connections, router
from django.http import HttpRequest, HttpResponse, HttpResponseNotModified
from django.utils.http import http_date, parse_http_date_safe, quote_etag

from alerts.models import Alert, ChangePoint
from benchmarks.freshness import run_tag
from benchmarks.models import Run

log = logging.getLogger(__name__)
# Cached responses also expire on their own: a safety net for edits made without signals
# (queryset.update()); the validator retires them on every run and catalogue change.
TIMEOUT_S = 900
MAX_BYTES = 4 * 1024 * 1024
_HEADERS = ("Content-Type", "Content-Language", "Vary", "X-Frame-Options")


CATALOGUE_KEY = "tokspeed:catalogue-version"


def bump_catalogue(**_: object) -> None:
    """A provider, endpoint, workload, vantage or schedule was saved or deleted (signals)."""
    try:
        if not cache.add(CATALOGUE_KEY, 1, timeout=None):
            cache.incr(CATALOGUE_KEY)
    except Exception:
        log.exception("could not bump the catalogue version")


def validator() -> tuple[str, datetime | None]:
    """(a version naming everything the views show, when it last changed)."""
    finished_at, newest_id, alerts_at, changes_at = _stamps()
    tag = f"{run_tag(finished_at, newest_id)}|c{cache.get(CATALOGUE_KEY, 0)}"
    # Alerts and change points are written by the evaluation a finished run requests, later:
    # a row written or changed moves its newest stamp; a row deleted bumps the catalogue
    # version (dashboard.apps), as counting the rows on every read did (a count grows with
    # a year of change points; the newest stamp is one index entry).
    stamps = [t for t in (finished_at, alerts_at, changes_at) if t is not None]
    parts = [tag] + [at.isoformat() if at else "" for at in (alerts_at, changes_at)]
    return "|".join(parts), max(stamps) if stamps else None


def _stamps() -> tuple:
    """newest_finished's two figures and the alert state in one round trip, not three (every
    read asks): (newest finish, newest run id, newest alert change, newest change point).
    Read where the view reads its runs (the replica, if routed)."""
    database = connections[router.db_for_read(Run)]
    run, alert, change = (
        database.ops.quote_name(model._meta.db_table) for model in (Run, Alert, ChangePoint)
    )
    # Table names from the models' meta, no value in the SQL.
    sql = (
        f"SELECT (SELECT MAX(finished_at) FROM {run}), (SELECT MAX(id) FROM {run}),"  # noqa: S608
        f" (SELECT MAX(updated_at) FROM {alert}), (SELECT MAX(detected_at) FROM {change})"
    )
    with database.cursor() as cursor:
        cursor.execute(sql)
        finished, newest, alerts_at, changes_at = cursor.fetchone()
    # A raw cursor skips the field converters: SQLite (`make run`) answers a MAX() as text.
    return _aware(finished), newest, _aware(alerts_at), _aware(changes_at)


def _aware(value: datetime | str | None) -> datetime | None:
    """A stored timestamp as an aware datetime (stored in UTC; SQLite's as naive text)."""
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    if value is not None and value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value


def _who(request: HttpRequest) -> str:
    user = getattr(request, "user", None)
    user_id = user.pk if user is not None and user.is_authenticated else ""
    return "|".join(
        (
            str(user_id),
            request.headers.get("Authorization", ""),
            request.COOKIES.get(settings.CSRF_COOKIE_NAME, ""),
            request.headers.get("Accept", ""),
            request.headers.get("Accept-Language", ""),
        )
    )


def _not_modified(request: HttpRequest, etag: str, modified: datetime | None) -> bool:
    wanted = request.headers.get("If-None-Match")
    if wanted is not None:
        tags = {t.strip().removeprefix("W/") for t in wanted.split(",")}
        return "*" in tags or etag in tags
    since = parse_http_date_safe(request.headers.get("If-Modified-Since", ""))
    return since is not None and modified is not None and int(modified.timestamp()) <= since


def _stamp(response: HttpResponse, etag: str, modified: datetime | None) -> HttpResponse:
    response["ETag"] = etag
    if modified is not None:
        response["Last-Modified"] = http_date(modified.timestamp())
    # Caches may keep it but must ask again (a 304 is cheap) before each use.
    response["Cache-Control"] = "private, no-cache" if _private(response) else "no-cache"
    return response


def _private(response: HttpResponse) -> bool:
    return bool(response.get("Vary", "")) and "Cookie" in response.get("Vary", "")


def revalidated(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Wrap a read-only view: 304 for a client that has it, the shared cache for the rest."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
        if request.method not in ("GET", "HEAD"):
            return view(request, *args, **kwargs)
        version, modified = validator()
        digest = hashlib.sha256(
            f"{version}\n{request.get_full_path()}\n{_who(request)}".encode()
        ).hexdigest()
        etag = quote_etag(digest[:32])
        if _not_modified(request, etag, modified):
            return _stamp(HttpResponseNotModified(), etag, modified)
        key = f"tokspeed:view:{digest}"
        use_cache = settings.TOKSPEED_RESPONSE_CACHE
        try:
            kept = cache.get(key) if use_cache else None
        except Exception:
            log.exception("response cache unavailable")
            kept = None
        if kept is not None:
            status, headers, content = kept
            response = HttpResponse(content, status=status)
            for name, value in headers:
                response[name] = value
            return _stamp(response, etag, modified)
        response = view(request, *args, **kwargs)
        if hasattr(response, "render") and not getattr(response, "is_rendered", True):
            response = response.render()
        if response.status_code != 200 or response.streaming or response.cookies:
            return response
        if use_cache and len(response.content) <= MAX_BYTES:
            headers = [(name, response[name]) for name in _HEADERS if response.has_header(name)]
            try:
                cache.set(key, (200, headers, response.content), timeout=TIMEOUT_S)
            except Exception:
                log.exception("could not keep a response in the cache")
        return _stamp(response, etag, modified)

    return wrapper
