"""The OpenAPI document as the server answers: validation errors are 400 with the JSON error body (never
FastAPI's default 422), and every operation lists the error statuses the server really produces: 401 and
429 on every API route, 404 wherever the path names something. A schema-driven test (schemathesis,
tests/api/test_openapi_schema.py) holds the document to the server."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

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
        for path, path_item in document.get("paths", {}).items():
            for operation in path_item.values():
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
