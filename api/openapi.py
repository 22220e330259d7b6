"""The OpenAPI document as the server answers: validation errors are 400 with the JSON error body (never
FastAPI's default 422), and every operation lists the error statuses the server really produces: 401 and
429 on every API route, 404 wherever the path names something. A schema-driven test (schemathesis,
tests/api/test_openapi.py) holds the document to the server.

The document declares the API key as an HTTP Bearer scheme and puts it on exactly the operations whose
dependencies authenticate with it (read from the routes, so a new route cannot be forgotten): Swagger UI's
"Authorize" then sends ``Authorization: Bearer <key>`` with "Try it out". The health check takes the key
optionally (an empty requirement beside the scheme); the Sentry and ingest endpoints that authenticate with
an app key carry no Bearer requirement.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from fastapi import FastAPI
from fastapi.dependencies.models import Dependant
from fastapi.openapi.utils import get_openapi
from fastapi.routing import APIRoute, iter_route_contexts

from api.deps import optional_api_key, require_api_key

ERROR_SCHEMA = {
    "type": "object",
    "properties": {"error": {"type": "string"}, "detail": {"type": "string"}},
    "required": ["error", "detail"],
    "title": "ErrorBody",
}
BAD_REQUEST = {
    "description": "`Bad Request`: a parameter or the body is invalid; `detail` names the field and the rule.",
    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}},
}


def _error(description: str) -> dict[str, Any]:
    return {"description": description, "content": BAD_REQUEST["content"]}


UNAUTHORIZED = _error("`Invalid API Key`: missing, unknown, regenerated, whitespace, or an app key.")
RATE_LIMITED = _error("`Rate Limited`: the key's requests per second; see `Retry-After`.")
NOT_FOUND = _error("`Not Found`: nothing with that id or slug in the key's organization (never another's).")


BEARER = "ApiKey"
BEARER_SCHEME = {
    "type": "http",
    "scheme": "bearer",
    "bearerFormat": "stacklens_api_…",
    "description": "The organization's API key (owners find it under Settings → API tokens), sent as "
    "`Authorization: Bearer stacklens_api_…`. App keys (`stacklens_app_…`) are refused here.",
}


def _calls(dependant: Dependant) -> Iterator[Callable[..., Any]]:
    """Every dependency callable of a route, however deeply nested."""
    for dependency in dependant.dependencies:
        if dependency.call is not None:
            yield dependency.call
        yield from _calls(dependency)


def _security(app: FastAPI) -> dict[tuple[str, str], list[dict[str, list[str]]]]:
    """(path, method) → the operation's security requirement, for every route that reads the API key."""
    found: dict[tuple[str, str], list[dict[str, list[str]]]] = {}
    # Route contexts, as get_openapi walks them: included routers' routes with their routers' dependencies.
    for route in iter_route_contexts(app.routes):
        if not isinstance(route.original_route, APIRoute) or not route.include_in_schema:
            continue
        calls = set(_calls(route.dependant))
        if require_api_key in calls:
            requirement: list[dict[str, list[str]]] = [{BEARER: []}]
        elif optional_api_key in calls:
            requirement = [{BEARER: []}, {}]  # the key is optional: without it, the answer says less
        else:
            continue
        for method in route.methods or ():
            found[(route.path_format or "", method.lower())] = requirement
    return found


def install_openapi(app: FastAPI) -> None:
    """Replace ``app.openapi`` with the corrected document (built once, then cached like FastAPI's)."""

    def build() -> dict[str, Any]:
        if app.openapi_schema is not None:
            return app.openapi_schema
        document = get_openapi(
            title=app.title, version=app.version, description=app.description, routes=app.routes
        )
        components = document.setdefault("components", {}).setdefault("schemas", {})
        components["ErrorBody"] = {**components.get("ErrorBody", {}), **ERROR_SCHEMA}
        document["components"].setdefault("securitySchemes", {})[BEARER] = BEARER_SCHEME
        security = _security(app)
        for path, path_item in document.get("paths", {}).items():
            for method, operation in path_item.items():
                if (path, method) in security:
                    operation["security"] = security[(path, method)]
                responses = operation.setdefault("responses", {})
                validation = responses.pop("422", None)
                if validation is not None or operation.get("parameters") or operation.get("requestBody"):
                    responses.setdefault("400", BAD_REQUEST)
                # Every /api route reads the Authorization header when one is sent (the health check too,
                # which then checks the key), and every checked key spends its per-second budget.
                if path.startswith("/api/"):
                    responses.setdefault("401", UNAUTHORIZED)
                    responses.setdefault("429", RATE_LIMITED)
                if "{" in path:
                    responses.setdefault("404", NOT_FOUND)
        for unused in ("HTTPValidationError", "ValidationError"):
            components.pop(unused, None)
        app.openapi_schema = document
        return document

    app.openapi = build  # type: ignore[method-assign]
