"""Keyset ("cursor") pagination of runs, newest first, on the index run_newest (slot, id).

A page is the `page_size` runs just before (or after) one (slot, id) position, so every page
costs one short index range however deep it is (OFFSET walked every row before it), and a
cursor keeps naming the same runs while new runs arrive at the top.
"""

import base64
import binascii
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import Q, QuerySet
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from .pagination import _positive

# Direction letters in a cursor: "n" = older than the position, "p" = newer than it.
OLDER, NEWER = "n", "p"


def encode_cursor(direction: str, slot: datetime, run_id: int) -> str:
    raw = f"{direction}|{slot.isoformat()}|{run_id}".encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def parse_cursor(value: str) -> tuple[str, datetime, int]:
    """(direction, slot, id) of a cursor; ValueError when it is not one of ours."""
    try:
        padded = value + "=" * (-len(value) % 4)
        direction, slot, run_id = base64.urlsafe_b64decode(padded).decode().split("|")
        moment = datetime.fromisoformat(slot)
        if direction not in (OLDER, NEWER) or moment.tzinfo is None:
            raise ValueError(value)
        return direction, moment, int(run_id)
    except (ValueError, UnicodeDecodeError, binascii.Error):
        raise ValueError(f"not a cursor: {value!r}") from None


def decode_cursor(value: str) -> tuple[str, datetime, int]:
    """(direction, slot, id); a 400 naming `cursor` when it is not one of ours."""
    try:
        return parse_cursor(value)
    except ValueError:
        raise ValidationError(
            {"cursor": ["Not a cursor from this API; follow next/previous."]}
        ) from None


def older_than(slot: datetime, run_id: int) -> Q:
    """(slot, id) < (slot₀, id₀), written so the index range starts at slot₀ (slot ≤ slot₀)."""
    return Q(slot__lte=slot) & (Q(slot__lt=slot) | Q(id__lt=run_id))


def newer_than(slot: datetime, run_id: int) -> Q:
    return Q(slot__gte=slot) & (Q(slot__gt=slot) | Q(id__gt=run_id))


@dataclass(frozen=True)
class KeysetPage:
    runs: list
    has_older: bool  # runs exist after this page's last (older) one
    has_newer: bool  # runs exist before this page's first (newer) one


def keyset_page(
    queryset: QuerySet,
    *,
    direction: str = OLDER,
    position: tuple[datetime, int] | None = None,
    size: int,
) -> KeysetPage:
    """Up to `size` runs, newest first: the newest of all (no position), those just older than
    `position` (OLDER) or those just newer than it (NEWER). One index range each way."""
    if direction == OLDER:
        runs = queryset.order_by("-slot", "-id")
        if position:
            runs = runs.filter(older_than(*position))
        page = list(runs[: size + 1])
        return KeysetPage(page[:size], len(page) > size, position is not None)
    runs = queryset.filter(newer_than(*position)).order_by("slot", "id")
    page = list(runs[: size + 1])
    # Came from an older page: that page (at least) lies beyond this one's oldest run.
    return KeysetPage(list(reversed(page[:size])), True, len(page) > size)


class RunCursor:
    """`cursor` (opaque, from next/previous) and `page_size` (1–500, default 50)."""

    page_query_param = "cursor"
    page_size_query_param = "page_size"
    page_size = 50
    max_page_size = 500

    def paginate_queryset(self, queryset: QuerySet, request: Request, view: Any = None) -> list:
        self.request = request
        size = _positive(request.query_params, self.page_size_query_param, self.max_page_size)
        self.size = size or self.page_size
        raw = request.query_params.get(self.page_query_param)
        direction, position = OLDER, None
        if raw:
            direction, slot, run_id = decode_cursor(raw)
            position = (slot, run_id)
        found = keyset_page(queryset, direction=direction, position=position, size=self.size)
        self.page, self.has_next, self.has_previous = found.runs, found.has_older, found.has_newer
        return self.page

    def _link(self, direction: str, run: Any) -> str:
        query = self.request.query_params.copy()
        query[self.page_query_param] = encode_cursor(direction, run.slot, run.id)
        return f"{self.request.build_absolute_uri(self.request.path)}?{query.urlencode()}"

    def get_next_link(self) -> str | None:
        return self._link(OLDER, self.page[-1]) if self.has_next and self.page else None

    def get_previous_link(self) -> str | None:
        return self._link(NEWER, self.page[0]) if self.has_previous and self.page else None

    def get_paginated_response(self, data: list) -> Response:
        return Response(
            {"next": self.get_next_link(), "previous": self.get_previous_link(), "results": data}
        )

    def get_paginated_response_schema(self, schema: dict) -> dict:
        link = {"type": "string", "nullable": True, "format": "uri"}
        return {
            "type": "object",
            "required": ["results"],
            "properties": {"next": link, "previous": link, "results": schema},
        }

    def get_schema_operation_parameters(self, view: Any) -> list[dict]:
        return [
            {
                "name": self.page_query_param,
                "required": False,
                "in": "query",
                "description": "Opaque position from `next` or `previous`.",
                "schema": {"type": "string"},
            },
            {
                "name": self.page_size_query_param,
                "required": False,
                "in": "query",
                "description": f"Runs per page (1–{self.max_page_size}, default {self.page_size}).",
                "schema": {"type": "integer"},
            },
        ]
