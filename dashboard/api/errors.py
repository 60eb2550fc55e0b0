"""One exception handler: bad input answers 400 naming the field, never 500."""

import logging

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import DataError
from django.db.models import ProtectedError, RestrictedError
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

log = logging.getLogger(__name__)


class Conflict(exceptions.APIException):
    status_code = status.HTTP_409_CONFLICT
    default_detail = "The request conflicts with the current state of the data."
    default_code = "conflict"


class QuotaRefused(exceptions.Throttled):
    """A 429 whose detail names the quota; Retry-After when waiting would help."""

    def __init__(self, detail: str, *, wait: float | None) -> None:
        super().__init__(wait=wait, detail=detail, code="quota_exceeded")


def as_drf_validation_error(exc: DjangoValidationError) -> exceptions.ValidationError:
    """Keep field names: selectors raise Django's ValidationError with a dict or a message."""
    if hasattr(exc, "error_dict"):
        return exceptions.ValidationError(exc.message_dict)
    return exceptions.ValidationError({"detail": exc.messages})


def exception_handler(exc: Exception, context: dict) -> Response | None:
    if isinstance(exc, DjangoValidationError):
        exc = as_drf_validation_error(exc)
    elif isinstance(exc, ProtectedError | RestrictedError):
        names = sorted({str(type(obj)._meta.verbose_name_plural) for obj in exc.protected_objects})
        exc = Conflict(
            f"Still referenced by {', '.join(names)}; disable it instead of deleting it."
        )
    elif isinstance(exc, RequestDataTooBig):
        exc = exceptions.ParseError(
            f"The request body is larger than {settings.DATA_UPLOAD_MAX_MEMORY_SIZE} bytes."
        )
    elif isinstance(exc, DataError):
        # Field validation should have caught this; answer as the client's error, and log it so
        # the missing validation gets fixed.
        log.warning("database refused a value from an API request: %s", exc)
        exc = exceptions.ValidationError(
            {"detail": ["A value is out of range or not allowed by the database."]}
        )
    return drf_exception_handler(exc, context)
