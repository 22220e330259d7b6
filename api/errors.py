"""The API's error shape: ``{"error": "<spec message>", "detail": "<plain words>"}`` (docs/architecture.md
§11.2)."""

from __future__ import annotations

import logging

from clickhouse_connect.driver.exceptions import DataError as WarehouseDataError
from clickhouse_connect.driver.exceptions import OperationalError as WarehouseOperationalError
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from sqlalchemy.exc import DataError
from sqlalchemy.exc import OperationalError as StoreOperationalError
from sqlalchemy.exc import TimeoutError as StorePoolTimeout
from starlette.exceptions import HTTPException as StarletteHTTPException

from stacklens.control.store_errors import as_unavailable, store_unavailable
from stacklens.errors import (
    ApplicationNotFound,
    Conflict,
    Forbidden,
    Gone,
    InvalidInput,
    NotFound,
    RateLimited,
    StackLensError,
    TooLarge,
    Unavailable,
    UnsupportedEncoding,
)

# The spec's messages, word for word (defined once, shared with the shipper and the core).
from stacklens_contract.words import APPLICATION_NOT_FOUND, INVALID_API_KEY, RATE_LIMITED, SERVICE_UNAVAILABLE

log = logging.getLogger(__name__)

__all__ = [
    "APPLICATION_NOT_FOUND",
    "INVALID_API_KEY",
    "RATE_LIMITED",
    "SERVICE_UNAVAILABLE",
    "ApiError",
    "error_response",
    "install_error_handlers",
]


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


# The one map from a domain error's kind (stacklens/errors.py) to its answer: status and error word. The
# first kind the exception is an instance of wins, so a `DuplicateBudget(BudgetError, Conflict)` answers 409
# though a BudgetError is bad input. The detail is always the exception's own message.
DOMAIN_ERRORS: tuple[tuple[type[StackLensError], int, str], ...] = (
    (ApplicationNotFound, 404, APPLICATION_NOT_FOUND),
    (NotFound, 404, "Not Found"),
    (Conflict, 409, "Conflict"),
    (Forbidden, 403, "Forbidden"),
    (Gone, 410, "Gone"),
    (Unavailable, 503, SERVICE_UNAVAILABLE),
    (RateLimited, 429, RATE_LIMITED),
    (TooLarge, 413, "Payload Too Large"),
    (UnsupportedEncoding, 415, "Unsupported Media Type"),
    (InvalidInput, 400, "Bad Request"),
    (StackLensError, 400, "Bad Request"),
)
# How long a client should wait before retrying a 503.
RETRY_AFTER_SECONDS = 30


def domain_error_answer(exc: StackLensError) -> tuple[int, str, dict[str, str]]:
    """The status, error word and headers ``exc`` is answered with."""
    status, word = next((s, w) for kind, s, w in DOMAIN_ERRORS if isinstance(exc, kind))
    # A kind may say how long its retry should wait (the disk floor: stacklens/disk_floor.py).
    retry_after = getattr(exc, "retry_after_seconds", RETRY_AFTER_SECONDS)
    headers = {"Retry-After": str(retry_after)} if status == 503 else {}
    if isinstance(exc, RateLimited):
        headers = {"Retry-After": str(exc.retry_after)}
    return status, word, headers


def error_response(
    status: int, error: str, detail: str = "", headers: dict[str, str] | None = None
) -> JSONResponse:
    return JSONResponse({"error": error, "detail": detail}, status_code=status, headers=headers)


# Every id the service hands out (SQL keys, 52-bit issue ids) fits a signed 64-bit integer; the stores
# refuse anything larger (SQLite raises OverflowError, PostgreSQL "integer out of range", ClickHouse a parse
# error), which must read as "no such thing", not as a crash.
MAX_ID = 2**63 - 1


def _out_of_range_path_param(request: Request) -> str | None:
    """The name of a path parameter holding a number no id can be, if any."""
    for name, value in (request.scope.get("path_params") or {}).items():
        text = str(value).strip()
        if text.lstrip("-").isdigit() and not 0 <= int(text) <= MAX_ID:
            return str(name)
    return None


async def _as_http_error(request: Request, status: int, error: str, detail: str) -> Response:
    """Answer through the app's own HTTP error handler (JSON for the API, a page for the dashboards)."""
    if request.url.path.startswith("/api"):
        return error_response(status, error, detail)
    handler = request.app.exception_handlers.get(StarletteHTTPException)
    if handler is None:
        return error_response(status, error, detail)
    answer: Response = await handler(request, StarletteHTTPException(status, detail or error))
    return answer


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(StackLensError)
    async def _domain_error(_: Request, exc: StackLensError) -> JSONResponse:
        status, word, headers = domain_error_answer(exc)
        return error_response(status, word, str(exc), headers)

    @app.exception_handler(WarehouseOperationalError)
    async def _warehouse_down(request: Request, exc: Exception) -> JSONResponse:
        # The driver's own error for a server that does not answer: the same retryable 503 as Unavailable.
        log.error(
            "answered 503 on %s %s, the warehouse is unavailable: %s", request.method, request.url.path, exc
        )
        headers = {"Retry-After": str(RETRY_AFTER_SECONDS)}
        return error_response(503, SERVICE_UNAVAILABLE, str(exc), headers)

    async def _store_unavailable(request: Request, exc: Exception) -> Response:
        # A session used outside session_scope (which already answers these as Unavailable): a locked or
        # read-only control store is the same retryable 503; any other store error is a bug, answered 500.
        if not store_unavailable(exc):
            return await _unexpected(request, exc)
        refusal = as_unavailable(exc)
        log.error("answered 503 on %s %s: %s", request.method, request.url.path, refusal)
        status, word, headers = domain_error_answer(refusal)
        if request.url.path.startswith("/api"):
            return error_response(status, word, str(refusal), headers)
        return await _as_http_error(request, status, word, str(refusal))

    app.add_exception_handler(StoreOperationalError, _store_unavailable)
    app.add_exception_handler(StorePoolTimeout, _store_unavailable)

    async def _number_out_of_range(request: Request, exc: Exception) -> Response:
        name = _out_of_range_path_param(request)
        if name is not None:
            return await _as_http_error(
                request, 404, "Not Found", f"no {name.replace('_', ' ')} with that id"
            )
        log.info("a value out of range reached a store on %s: %s", request.url.path, exc)
        if isinstance(exc, OverflowError | WarehouseDataError) or "out of range" in str(exc):
            detail = f"a number in the request is out of range (at most {MAX_ID})"
        else:
            detail = "a value in the request cannot be stored as given (too long or of the wrong kind)"
        return await _as_http_error(request, 400, "Bad Request", detail)

    app.add_exception_handler(OverflowError, _number_out_of_range)
    app.add_exception_handler(DataError, _number_out_of_range)
    app.add_exception_handler(WarehouseDataError, _number_out_of_range)

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> Response:
        # Starlette's default is a plain-text "Internal Server Error"; clients parse the error shape.
        log.error("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
        return error_response(
            500, "Internal Server Error", "the service failed to answer this request; it has been logged"
        )

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
        return error_response(
            exc.status_code, str(exc.detail) if exc.detail else "Error", "", getattr(exc, "headers", None)
        )
