"""JSON bodies within limits: too large or nested too deep is a JSON 400, never a 500."""

from __future__ import annotations

import codecs
import json
from typing import Any

from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser


def depth(value: Any) -> int:
    """Nesting depth of parsed JSON (a scalar is 0), without recursion."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            stack.extend((child, level + 1) for child in item.values())
        elif isinstance(item, list):
            stack.extend((child, level + 1) for child in item)
        else:
            continue
        deepest = max(deepest, level + 1)
    return deepest


class GuardedJSONParser(JSONParser):
    """DRF reads a JSON body from the socket itself, past Django's DATA_UPLOAD_MAX_MEMORY_SIZE:
    this parser reads at most that many bytes and refuses JSON nested past
    TOKSPEED_MAX_JSON_DEPTH levels."""

    def parse(self, stream, media_type=None, parser_context=None) -> Any:
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        raw = stream.read(limit + 1) if stream is not None else b""
        if len(raw) > limit:
            raise ParseError(f"The request body is larger than {limit} bytes.")
        encoding = (parser_context or {}).get("encoding", settings.DEFAULT_CHARSET)
        try:
            text = codecs.decode(raw, encoding)
            data = json.loads(text, parse_constant=_refuse_constant)
        except RecursionError:
            raise ParseError(self._too_deep()) from None
        except (ValueError, UnicodeDecodeError) as exc:
            raise ParseError(f"JSON parse error - {exc}") from None
        if depth(data) > settings.TOKSPEED_MAX_JSON_DEPTH:
            raise ParseError(self._too_deep())
        return data

    @staticmethod
    def _too_deep() -> str:
        return f"The JSON body is nested deeper than {settings.TOKSPEED_MAX_JSON_DEPTH} levels."


def _refuse_constant(name: str) -> None:
    raise ValueError(f"{name} is not valid JSON")
