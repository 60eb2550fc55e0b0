"""How many rows a per-endpoint page lists: the first PAGE_ROWS of its order, or all on asking.

The price and agent-loop pages order every endpoint (the order, the frontier and the fastest are
computed over all of them) but list the first PAGE_ROWS in their tables unless the query says
`rows=all` (one click, "Show all N endpoints"): at 400 endpoints the rest of the table cost more
to render than the figures behind it, and grew with the fleet. The leaderboard page lists its
top rows the same way.
"""

from collections.abc import Sequence
from typing import TypeVar
from urllib.parse import urlencode

from django.core.exceptions import ValidationError
from django.http import QueryDict

PAGE_ROWS = 100
Item = TypeVar("Item")


def wants_all(query: QueryDict) -> bool:
    """Whether the query asks for every row; a 400 for a `rows` other than "all" or empty."""
    wanted = (query.get("rows") or "").strip()
    if wanted not in ("", "all"):
        raise ValidationError({"rows": ["rows: use 'all' or leave it empty"]})
    return wanted == "all"


def listed(query: QueryDict, items: Sequence[Item]) -> tuple[list[Item], str | None]:
    """(the rows to list, the query string of the page listing them all, or None when these are
    all of them)."""
    if wants_all(query) or len(items) <= PAGE_ROWS:
        return list(items), None
    everything = {name: query.get(name) for name in query if query.get(name)}
    return list(items[:PAGE_ROWS]), urlencode({**everything, "rows": "all"})
