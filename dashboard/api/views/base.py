"""What every API viewset shares: strict parameters, checked lookups, 409 on a protected delete."""

import re

from rest_framework import viewsets
from rest_framework.exceptions import NotFound

from ..params import StrictQueryMixin

# Lookups that cannot reach the database with a value it refuses (huge ints, odd bytes).
SLUG_PATTERN = r"[-a-zA-Z0-9_]{1,120}"
ID_PATTERN = r"[0-9]{1,18}"


class CheckedLookupMixin:
    """A path value that cannot name an object is a 404 (JSON, like every API answer)."""

    lookup_pattern = ID_PATTERN
    # Route anything up to the next slash here, so a malformed value gets this JSON 404.
    lookup_value_regex = "[^/]+"

    def get_object(self):
        value = self.kwargs.get(self.lookup_url_kwarg or self.lookup_field, "")
        if not re.fullmatch(self.lookup_pattern, str(value)):
            raise NotFound()
        return super().get_object()


class ModelViewSet(CheckedLookupMixin, StrictQueryMixin, viewsets.ModelViewSet):
    """Readers list and retrieve; staff create, update and delete (see permissions)."""

    lookup_field = "slug"
    lookup_pattern = SLUG_PATTERN
