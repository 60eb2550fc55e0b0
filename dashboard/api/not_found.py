"""Unknown paths under /api/: a JSON 404 a client can read, not the dashboard's HTML page."""

from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponsePermanentRedirect, JsonResponse
from django.urls import Resolver404, resolve


def api_not_found(request: HttpRequest, rest: str = "") -> HttpResponse:
    """Answer 404 in JSON, naming the API's index; a path that only lacks its slash is sent on
    to it, as Django's APPEND_SLASH would (this view would otherwise take that path)."""
    path = request.path_info
    if settings.APPEND_SLASH and not path.endswith("/") and _a_resource(f"{path}/"):
        query = request.META.get("QUERY_STRING", "")
        return HttpResponsePermanentRedirect(f"{request.path}/" + (f"?{query}" if query else ""))
    detail = f"No API resource at {request.path}; every resource is listed at /api/v1/."
    return JsonResponse({"detail": detail}, status=404)


def _a_resource(path: str) -> bool:
    try:
        return resolve(path).func is not api_not_found
    except Resolver404:
        return False
