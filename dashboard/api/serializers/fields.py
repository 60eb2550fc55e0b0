"""Serializer fields shared by several resources."""

from typing import Any

from rest_framework import serializers


class SlugRef(serializers.SlugRelatedField):
    """A related object named by its slug; anything that cannot be a slug is refused up front
    (a NUL byte would otherwise reach PostgreSQL and fail there)."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("slug_field", "slug")
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> Any:
        if not isinstance(data, str) or "\x00" in data or len(data) > 200:
            model = self.get_queryset().model._meta.verbose_name
            raise serializers.ValidationError(f"Give the slug of a {model}.")
        return super().to_internal_value(data)
