"""Form widgets written out in Python where Django's templates cost a pass per choice.

A filter bar's select of every endpoint or provider grows with the catalogue: Django renders
each <option> through two included templates (about 0.05 ms each), so 400 endpoints cost
~20 ms of a page. QuickSelect writes the same markup itself.
"""

from html import escape  # what django.utils.html.escape calls, without its lazy-text wrapper
from typing import Any

from django import forms
from django.utils.choices import BaseChoiceIterator
from django.utils.safestring import SafeString, mark_safe


class QuickSelect(forms.Select):
    """forms.Select's markup (flat choices, one value) without a template per option."""

    def render(
        self, name: str, value: Any, attrs: dict[str, Any] | None = None, renderer: Any = None
    ) -> SafeString:
        chosen = set(self.format_value(value))
        options = "".join(
            f'\n  <option value="{escape(str(key))}"'
            f"{' selected' if str(key) in chosen else ''}>{escape(str(label))}</option>"
            for key, label in self.choices
        )
        final = self.build_attrs(self.attrs, attrs)
        # select.html's attrs.html: False left out, True as a bare name, the rest as text.
        written = "".join(
            f" {escape(str(key))}" + ("" if item is True else f'="{escape(str(item))}"')
            for key, item in final.items()
            if item is not False
        )
        return mark_safe(f'<select name="{escape(name)}"{written}>{options}\n</select>')  # noqa: S308


class FlatChoices(BaseChoiceIterator):
    """Choices that are already flat (value, label) pairs of text, taken as they are: a list is
    normalised pair by pair, by the field and again by its widget (the leaderboard's model
    select of 400 families: ~1 ms a page)."""

    def __init__(self, pairs: list[tuple[str, str]]) -> None:
        self.pairs = pairs

    def __iter__(self):
        return iter(self.pairs)
