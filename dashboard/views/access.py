"""Who may see the dashboard, and how bad query parameters are answered (400, never 500)."""

from collections.abc import Callable
from functools import wraps

from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

View = Callable[..., HttpResponse]


def dashboard_view(view: View) -> View:
    """Login required unless TOKSPEED_PUBLIC_DASHBOARD; a ValidationError becomes a 400 page."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
        if not settings.TOKSPEED_PUBLIC_DASHBOARD and not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        try:
            return view(request, *args, **kwargs)
        except ValidationError as error:
            return bad_request(request, error)

    return wrapper


def bad_request(request: HttpRequest, error: ValidationError) -> HttpResponse:
    """A 400 page that names each bad field and says what is accepted."""
    if hasattr(error, "error_dict"):
        problems = [(field, messages) for field, messages in error.message_dict.items()]
    else:
        problems = [("", error.messages)]
    return render(
        request,
        "dashboard/400.html",
        {"problems": problems, "fields": [field for field, _ in problems if field]},
        status=400,
    )
