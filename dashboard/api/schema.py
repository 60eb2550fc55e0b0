"""OpenAPI post-processing: document the error answers every operation can give."""

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.http import HttpRequest, HttpResponse

from .views.base import SLUG_PATTERN

ERROR_SCHEMA = {
    "type": "object",
    "description": "{field: [messages]} for bad input (naming each field), else {detail: text}.",
    "additionalProperties": {},
}
_JSON_ERROR = {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}


def _errors_for(path: str, operation: dict[str, Any]) -> dict[str, str]:
    params = {p.get("name") for p in operation.get("parameters", []) if p.get("in") == "query"}
    errors = {
        "401": "Login or an API token needed.",
        "403": "Not allowed for this user (writes need staff).",
        "429": "Too many requests: wait for Retry-After seconds.",
    }
    if params or "requestBody" in operation:
        errors["400"] = "Bad parameters, naming each field."
    if "{" in path or params & {"page", "format"}:
        errors["404"] = "No such object (or page, or format)."
    if "requestBody" in operation:
        errors["415"] = "Send JSON (or a form)."
    if operation.get("operationId", "").endswith("_destroy"):
        errors["409"] = "Still referenced by runs or schedules: disable it instead."
    return errors


def _describe_lookups(operation: dict[str, Any]) -> None:
    """Path slugs have a shape (dashboard/api/views/base.py): say so."""
    for parameter in operation.get("parameters", []):
        if parameter.get("in") == "path" and parameter.get("name") == "slug":
            parameter.setdefault("schema", {})["pattern"] = f"^{SLUG_PATTERN}$"


def _error_content(operation: dict[str, Any]) -> dict[str, Any]:
    """JSON errors; an operation answering CSV writes its errors as CSV when CSV was asked."""
    content = dict(_JSON_ERROR)
    if "text/csv" in operation.get("responses", {}).get("200", {}).get("content", {}):
        content["text/csv"] = {"schema": {"type": "string"}}
    return content


def add_error_responses(result: dict, generator: Any, request: Any, public: bool) -> dict:
    result.setdefault("components", {}).setdefault("schemas", {})["Error"] = ERROR_SCHEMA
    for path, operations in result.get("paths", {}).items():
        for operation in operations.values():
            _describe_lookups(operation)
            content = _error_content(operation)
            responses = operation.setdefault("responses", {})
            for code, description in _errors_for(path, operation).items():
                responses.setdefault(code, {"description": description, "content": content})
    return result


def cached_schema(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """The schema view, answered from this process's memory after its first answer per format:
    generating it takes seconds (the API docs showed "LOADING" meanwhile) and only a new
    version of the code changes it. It holds no data and is the same for every user."""
    made: dict[tuple[str, str], tuple[bytes, dict[str, str]]] = {}

    @wraps(view)
    def answer(request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
        key = (request.GET.urlencode(), request.headers.get("Accept", ""))
        if key not in made:
            response = view(request, *args, **kwargs)
            if hasattr(response, "render"):
                response.render()
            if response.status_code != 200:
                return response
            kept = ("Content-Type", "Content-Disposition", "Vary")
            made[key] = (response.content, {h: response[h] for h in kept if h in response})
        content, headers = made[key]
        return HttpResponse(content, headers=headers)

    return answer
