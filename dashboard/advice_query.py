"""The advisor's question from a query string: a saved profile, ad hoc figures, or both (the
figures override the profile's). Shared by the advisor page and /api/v1/advice/."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from django.core.exceptions import ValidationError

from advisor.feeds import FORMATS
from advisor.models import MAX_CALLS, MAX_INPUT_TOKENS, WorkloadProfile
from advisor.shape import Shape
from benchmarks.confidential import can_read_prompt_text
from benchmarks.models import Vantage, Workload
from providers.models import Endpoint

# name -> (type, minimum, maximum)
NUMBERS: dict[str, tuple[type, float, float]] = {
    "input_tokens": (int, 1, MAX_INPUT_TOKENS),
    "output_tokens": (int, 1, 1_000_000),
    "reasoning_tokens": (int, 0, 1_000_000),
    "cached_share": (float, 0, 1),
    "calls": (int, 1, MAX_CALLS),
    "tool_s": (float, 0, 86_400),
    "concurrency": (int, 1, 100_000),
    "budget_s": (float, 0.001, 10_000_000),
    "max_cost": (float, 0, 1_000_000),
}
FIELD = {"max_cost": "max_cost_usd"}
PARAMS = ("profile", "workload", *NUMBERS, "models", "current", "vantage", "format")
FORBIDDEN = "The advice on a custom workload is for members who may read its prompts."
SLUG = re.compile(r"^[-a-zA-Z0-9_]{1,120}$")


def _bad(name: str, message: str) -> ValidationError:
    return ValidationError({name: [f"{name}: {message}"]})


@dataclass(frozen=True, slots=True)
class Question:
    shape: Shape
    profile: WorkloadProfile | None
    current: Endpoint | None
    vantage: str | None
    format: str | None
    workload: Workload | None = None  # a custom workload: advice from its own runs

    def key(self) -> dict[str, Any]:
        key = {
            "shape": self.shape.as_dict(),
            "profile": self.profile.id if self.profile else None,
            "current": self.current.id if self.current else None,
            "vantage": self.vantage,
        }
        if self.workload is not None:
            key["workload"] = self.workload.id
        return key

    def allowed(self, user: Any) -> bool:
        """Advice on a custom workload is its team's: only for users who may read its text
        (docs/advisor.md, "A custom workload"); the standard advice is for every reader."""
        return self.workload is None or can_read_prompt_text(user)


def custom_workload(query: Mapping[str, Any], profile: WorkloadProfile | None) -> Workload | None:
    """The custom workload asked for (`workload=<slug>`), else the profile's; 400 for an unknown
    slug or a standard workload."""
    slug = _value(query, "workload")
    if not slug:
        return profile.workload if profile else None
    found = Workload.objects.filter(slug=slug).first() if SLUG.match(slug) else None
    if found is None:
        raise _bad("workload", f"no workload {slug!r}.")
    if not found.custom:
        raise _bad("workload", "name a custom workload; the standard advice needs none.")
    return found


def _value(query: Mapping[str, Any], name: str) -> str:
    value = query.get(name)
    value = "" if value is None else str(value).strip()
    if "\x00" in value:
        raise _bad(name, "null characters are not allowed.")
    return value


def _number(name: str, raw: str) -> float | int:
    kind, low, high = NUMBERS[name]
    try:
        value = kind(raw)
    except ValueError:
        raise _bad(name, "give a whole number." if kind is int else "give a number.") from None
    if not low <= value <= high:  # also refuses nan
        raise _bad(name, f"give a number from {low:g} to {high:g}.")
    return value


def parse(query: Mapping[str, Any], *, profile_slug: str | None = None) -> Question:
    """Raises ValidationError naming the bad parameter."""
    slug = profile_slug or _value(query, "profile")
    profile = None
    if slug:
        if not SLUG.match(slug):
            raise _bad("profile", "give a profile slug.")
        profile = (
            WorkloadProfile.objects.select_related("current_endpoint", "workload")
            .filter(slug=slug)
            .first()
        )
        if profile is None:
            raise _bad("profile", f"no workload profile {slug!r}.")
    shape = Shape.of(profile) if profile else Shape()
    overrides: dict[str, Any] = {}
    for name in NUMBERS:
        raw = _value(query, name)
        if raw:
            overrides[FIELD.get(name, name)] = _number(name, raw)
    models = _value(query, "models")
    if models:
        names = tuple(m.strip() for m in models.split(",") if m.strip())
        if not names or any(len(m) > 200 for m in names):
            raise _bad("models", "give model names separated by commas.")
        overrides["models"] = names
    shape = replace(shape, **overrides)
    current = profile.current_endpoint if profile else None
    current_slug = _value(query, "current")
    if current_slug:
        current = (
            Endpoint.objects.filter(slug=current_slug).first() if SLUG.match(current_slug) else None
        )
        if current is None:
            raise _bad("current", f"no endpoint {current_slug!r}.")
    vantage = _value(query, "vantage") or None
    if vantage and not (SLUG.match(vantage) and Vantage.objects.filter(slug=vantage).exists()):
        raise _bad("vantage", f"no vantage {vantage!r}.")
    format = _value(query, "format") or None
    if format and format not in FORMATS and format != "json":
        raise _bad("format", f"choose json, {', '.join(FORMATS)}.")
    return Question(
        shape=shape,
        profile=profile,
        current=current,
        vantage=vantage,
        format=None if format == "json" else format,
        workload=custom_workload(query, profile),
    )
