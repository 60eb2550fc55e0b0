"""System checks for what would make every request fail (run by `manage.py check`, runserver)."""

from django.conf import settings
from django.core.checks import CheckMessage, Error, register
from django.core.exceptions import ImproperlyConfigured

from .state import MISSING_KEY_LINE


@register()
def secret_key_is_set(app_configs: object = None, **kwargs: object) -> list[CheckMessage]:
    """Django reads SECRET_KEY lazily: without one, `check` passed and every page answered 500."""
    try:
        settings.SECRET_KEY  # noqa: B018 - reading it is the check (Django raises when empty)
    except ImproperlyConfigured:
        return [Error(MISSING_KEY_LINE.removeprefix("tokspeed: "), id="tokspeed.E001")]
    return []
