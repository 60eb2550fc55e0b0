"""OpenAPI post-processing: document the error answers every operation can give."""

from typing import Any

ERROR_SCHEMA = {
    "type": "object",
    "description": "{field: [messages]} for bad input (naming each field), else {detail: text}.",
    "additionalProperties": {},
}
_ERROR_CONTENT = {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}


def _errors_for(path: str, operation: dict[str, Any]) -> dict[str, str]:
    params = {p.get("name") for p in operation.get("parameters", []) if p.get("in") == "query"}
    errors = {
        "401": "Login or an API token needed.",
        "403": "Not allowed for this user (writes need staff).",
        "429": "Too many requests: wait for Retry-After seconds.",
    }
    if params or "requestBody" in operation:
        errors["400"] = "Bad parameters, naming each field."
    if "{" in path or "page" in params:
        errors["404"] = "No such object (or page)."
    if operation.get("operationId", "").endswith("_destroy"):
        errors["409"] = "Still referenced by runs or schedules: disable it instead."
    return errors


def add_error_responses(result: dict, generator: Any, request: Any, public: bool) -> dict:
    result.setdefault("components", {}).setdefault("schemas", {})["Error"] = ERROR_SCHEMA
    for path, operations in result.get("paths", {}).items():
        for operation in operations.values():
            responses = operation.setdefault("responses", {})
            for code, description in _errors_for(path, operation).items():
                responses.setdefault(code, {"description": description, "content": _ERROR_CONTENT})
    return result
