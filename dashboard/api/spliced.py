"""The leaderboard API's JSON with each row's figures written as the materialized board kept
them: ~30 numbers a row that are not turned into floats and back into text on every request
(for 400 rows, most of what rendering the answer cost).

A row given as BoardRow.as_spliced_dict(n) holds one key, SPLICE_KEY, where its figure fields
go; the renderer writes the answer as JSONRenderer does, then puts the row's figures_json in
place of that key: the same bytes JSONRenderer writes for the row's as_dict. Only the compact
form splices (an indented answer is rendered from as_dict rows).
"""

import re
from typing import Any

from rest_framework.renderers import JSONRenderer
from rest_framework.settings import api_settings

from benchmarks.selectors.rows import SPLICE_KEY, BoardRow

# The placeholder as compact JSON writes it: `,"\u0001":N,`. Inside a JSON string a quote is
# always escaped, so `,"` followed by this key can only be a key of an object.
_PLACEHOLDER = re.compile(rb',"\\u%04x":(\d+),' % ord(SPLICE_KEY))


class Spliced(dict):
    """An answer whose rows may hold placeholders; `texts` holds what each one stands for."""

    def __init__(self, *args: Any, texts: list[bytes], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.texts = texts


class SplicingJSONRenderer(JSONRenderer):
    def splices(self, accepted_media_type: str | None, renderer_context: dict) -> bool:
        """Whether this answer is written compact (the form figures_text has)."""
        return self.compact and self.get_indent(accepted_media_type, renderer_context) is None

    def render(
        self, data: Any, accepted_media_type: str | None = None, renderer_context: Any = None
    ) -> bytes:
        written = super().render(data, accepted_media_type, renderer_context)
        texts = getattr(data, "texts", None)
        if not texts:
            return written
        return _PLACEHOLDER.sub(lambda found: b"," + texts[int(found[1])] + b",", written)


# The API's renderers with JSONRenderer replaced by this one.
RENDERERS = [
    SplicingJSONRenderer if renderer is JSONRenderer else renderer
    for renderer in api_settings.DEFAULT_RENDERER_CLASSES
]


def row_dicts(rows: list[BoardRow], *, splice: bool) -> tuple[list[dict[str, Any]], list[bytes]]:
    """(each row as a dict, the texts its placeholders stand for): with `splice`, a row with
    figures_json is as_spliced_dict, any other as_dict."""
    if not splice:
        return [row.as_dict() for row in rows], []
    texts: list[bytes] = []
    data = []
    for row in rows:
        if row.figures_json:
            data.append(row.as_spliced_dict(len(texts)))
            texts.append(row.figures_json.encode())
        else:
            data.append(row.as_dict())
    return data, texts
