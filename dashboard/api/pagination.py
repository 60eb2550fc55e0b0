"""Page-number pagination with a caller-chosen page size; a malformed number is a 400."""

from rest_framework.exceptions import ValidationError
from rest_framework.pagination import PageNumberPagination


def _positive(query, name: str, maximum: int | None = None) -> int | None:
    raw = query.get(name)
    if raw is None:
        return None
    if not raw.isascii() or not raw.isdigit() or int(raw) < 1:
        raise ValidationError({name: ["Give a whole number ≥ 1."]})
    if maximum is not None and int(raw) > maximum:
        raise ValidationError({name: [f"Give at most {maximum}."]})
    return int(raw)


class Pages(PageNumberPagination):
    """`page` (from 1; past the last page is a 404) and `page_size` (1–500, default 50)."""

    page_size_query_param = "page_size"
    max_page_size = 500

    def get_page_size(self, request) -> int:
        size = _positive(request.query_params, self.page_size_query_param, self.max_page_size)
        return size or self.page_size

    def paginate_queryset(self, queryset, request, view=None):
        _positive(request.query_params, self.page_query_param)
        return super().paginate_queryset(queryset, request, view)
