"""Strict query parameters: unknown names, NUL bytes and malformed numbers are a 400."""

from collections.abc import Iterable

from django.http import QueryDict
from rest_framework.exceptions import ValidationError

# Parameters DRF itself understands on every view.
COMMON = frozenset({"format"})


def check_query(query: QueryDict, allowed: Iterable[str]) -> None:
    """Refuse parameters this view does not know (a typo must not silently widen a filter)."""
    known = COMMON | set(allowed)
    errors: dict[str, list[str]] = {}
    for name, values in query.lists():
        if name not in known:
            errors[name] = [f"Unknown parameter; this endpoint takes: {', '.join(sorted(known))}."]
        elif any("\x00" in value for value in values):
            errors[name] = ["Null characters are not allowed."]
        elif len(values) > 1:
            errors[name] = ["Give this parameter once."]
    if errors:
        raise ValidationError(errors)


def int_param(query: QueryDict, name: str, *, default: int, minimum: int, maximum: int) -> int:
    """An integer query parameter within [minimum, maximum]; a 400 naming it otherwise."""
    raw = query.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ValidationError({name: ["Give a whole number."]}) from None
    if not minimum <= value <= maximum:
        raise ValidationError({name: [f"Give a number from {minimum} to {maximum}."]})
    return value


def float_param(
    query: QueryDict, name: str, *, default: float, minimum: float, maximum: float
) -> float:
    """A finite number query parameter within [minimum, maximum]; a 400 naming it otherwise."""
    raw = query.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ValidationError({name: ["Give a number."]}) from None
    if not minimum <= value <= maximum:  # also refuses nan
        raise ValidationError({name: [f"Give a number from {minimum:g} to {maximum:g}."]})
    return value


class StrictQueryMixin:
    """For DRF views: only known query parameters (or a 400 naming the unknown one).

    Known: `query_params_allowed`, plus the filterset's and the paginator's parameters on the
    actions listed in `paginated_actions`.
    """

    query_params_allowed: tuple[str, ...] = ()
    paginated_actions: tuple[str, ...] = ("list",)

    def allowed_query_params(self) -> set[str]:
        names = set(self.query_params_allowed)
        if getattr(self, "action", None) in self.paginated_actions:
            filterset_class = getattr(self, "filterset_class", None)
            if filterset_class is not None:
                names |= set(filterset_class.base_filters)
            paginator = getattr(self, "paginator", None)
            if paginator is not None:
                names |= {paginator.page_query_param, paginator.page_size_query_param}
        return names

    def initial(self, request, *args, **kwargs) -> None:
        super().initial(request, *args, **kwargs)
        check_query(request.query_params, self.allowed_query_params())
