"""The API's error shape: ``{"error": "<spec message>", "detail": "<plain words>"}`` (DESIGN §4.2)."""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

# The spec's messages, word for word.
INVALID_API_KEY = "Invalid API Key"
APPLICATION_NOT_FOUND = "Application Not Found"
RATE_LIMITED = "Rate Limited"
SERVICE_UNAVAILABLE = "Service Unavailable"


class ApiError(Exception):
    """Raise anywhere under a route to answer with the error shape."""

    def __init__(
        self, status: int, error: str, detail: str = "", headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(error)
        self.status = status
        self.error = error
        self.detail = detail
        self.headers = headers or {}


def error_response(status: int, error: str, detail: str = "", headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": error, "detail": detail}, status_code=status, headers=headers)


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ApiError)
    async def _api_error(_: Request, exc: ApiError) -> JSONResponse:
        return error_response(exc.status, exc.error, exc.detail, exc.headers)

    @app.exception_handler(RequestValidationError)
    async def _validation(_: Request, exc: RequestValidationError) -> JSONResponse:
        first = exc.errors()[0] if exc.errors() else {}
        where = ".".join(str(p) for p in first.get("loc", ()))
        return error_response(400, "Bad Request", f"{where}: {first.get('msg', 'invalid input')}")

    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        return error_response(exc.status_code, str(exc.detail) if exc.detail else "Error", "", getattr(exc, "headers", None))
