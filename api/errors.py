"""The API's error shape: ``{"error": "<spec message>", "detail": "<plain words>"}`` (DESIGN §4.2)."""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from stacklens.errors import Conflict, Forbidden, Gone, InvalidInput, NotFound, StackLensError, Unavailable

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


# The one map from a domain error's kind (stacklens/errors.py) to its answer: status and error word. The
# first kind the exception is an instance of wins, so a `DuplicateBudget(BudgetError, Conflict)` answers 409
# though a BudgetError is bad input. The detail is always the exception's own message.
DOMAIN_ERRORS: tuple[tuple[type[StackLensError], int, str], ...] = (
    (NotFound, 404, "Not Found"),
    (Conflict, 409, "Conflict"),
    (Forbidden, 403, "Forbidden"),
    (Gone, 410, "Gone"),
    (Unavailable, 503, SERVICE_UNAVAILABLE),
    (InvalidInput, 400, "Bad Request"),
    (StackLensError, 400, "Bad Request"),
)
# How long a client should wait before retrying a 503.
RETRY_AFTER_SECONDS = 30


def domain_error_answer(exc: StackLensError) -> tuple[int, str, dict[str, str]]:
    """The status, error word and headers ``exc`` is answered with."""
    status, word = next((s, w) for kind, s, w in DOMAIN_ERRORS if isinstance(exc, kind))
    headers = {"Retry-After": str(RETRY_AFTER_SECONDS)} if status == 503 else {}
    return status, word, headers


def error_response(status: int, error: str, detail: str = "", headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": error, "detail": detail}, status_code=status, headers=headers)


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(StackLensError)
    async def _domain_error(_: Request, exc: StackLensError) -> JSONResponse:
        status, word, headers = domain_error_answer(exc)
        return error_response(status, word, str(exc), headers)

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
