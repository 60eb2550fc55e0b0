"""What every API viewset shares: strict parameters, slug or numeric lookups, 409 on delete."""

from rest_framework import viewsets

from ..params import StrictQueryMixin

# Path lookups that cannot reach the database with a value it refuses (huge ints, odd bytes).
SLUG_LOOKUP = r"[-a-zA-Z0-9_]{1,120}"
ID_LOOKUP = r"[0-9]{1,18}"


class ModelViewSet(StrictQueryMixin, viewsets.ModelViewSet):
    """Readers list and retrieve; staff create, update and delete (see permissions)."""

    lookup_field = "slug"
    lookup_value_regex = SLUG_LOOKUP


class ReadOnlyModelViewSet(StrictQueryMixin, viewsets.ReadOnlyModelViewSet):
    lookup_value_regex = ID_LOOKUP
