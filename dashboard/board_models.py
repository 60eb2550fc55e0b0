"""The leaderboard by model: the same model at several providers is the comparison people come
for (Llama 3.3 70B at Groq, Cerebras and SambaNova), so rows filter and group by model family."""

from __future__ import annotations

from collections import Counter

from django.core.exceptions import ValidationError

from benchmarks.selectors.rows import BoardRow

GROUPINGS = ("", "model")


def model_choices(rows: list[BoardRow]) -> list[tuple[str, int]]:
    """(family, endpoints) for every family on the board, the most widely served first."""
    counts = Counter(row.model_family for row in rows)
    return sorted(counts.items(), key=lambda item: (-item[1], item[0].lower()))


def parse_model_params(query, rows: list[BoardRow]) -> tuple[str, str]:
    """`model` (a family on the board, or "") and `group` ("" or "model"); 400 otherwise."""
    model = (query.get("model") or "").strip()
    group = (query.get("group") or "").strip()
    if model:
        model = family_of(model, rows)
    if group not in GROUPINGS:
        raise ValidationError({"group": ["group: use 'model' or leave it empty"]})
    return model, group


def family_of(model: str, rows: list[BoardRow]) -> str:
    """The family `model` names: a family on the board or a model id one of its rows serves
    (`gpt-4o-mini` as well as "GPT-4o mini"), ignoring case; 400 when none does."""
    wanted = model.casefold()
    for row in rows:
        if wanted in (row.model_family.casefold(), row.model.casefold()):
            return row.model_family
    raise ValidationError({"model": [f"model: no endpoint serves {model!r} on this board"]})


def only_model(rows: list[BoardRow], model: str) -> list[BoardRow]:
    return [row for row in rows if row.model_family == model] if model else rows


def group_by_model(rows: list[BoardRow]) -> list[tuple[str, list[BoardRow]]]:
    """Families in the order of their best row (rows are sorted already), rows kept in order."""
    groups: dict[str, list[BoardRow]] = {}
    for row in rows:
        groups.setdefault(row.model_family, []).append(row)
    return list(groups.items())
