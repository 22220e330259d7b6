"""The one map from domain errors to answers: each kind's status, the error shape with the exception's own
message, Retry-After on 503; and the dashboards show the same errors as pages outside /api."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from api.app import create_app
from api.errors import DOMAIN_ERRORS
from stacklens.cli.app import build_app
from stacklens.control.errors import AccountError, AccountNotFound
from stacklens.control.keys.values import KeyDecryptionError
from stacklens.errors import Conflict, Forbidden, Gone, InvalidInput, NotFound, StackLensError, Unavailable
from stacklens.issues.reads import BadListRequest
from stacklens.performance.budget_rules import BudgetError, DuplicateBudget
from stacklens.settings import Settings

CASES = [
    (InvalidInput("limit must be between 1 and 100"), 400, "Bad Request"),
    (NotFound("no budget 7 in this organization"), 404, "Not Found"),
    (Conflict("already resolved"), 409, "Conflict"),
    (Forbidden("owners only"), 403, "Forbidden"),
    (Gone("the link was revoked"), 410, "Gone"),
    (Unavailable("the warehouse does not answer"), 503, "Service Unavailable"),
    (StackLensError("something else"), 400, "Bad Request"),
    # Topic errors answer by their kind, whatever their own base classes.
    (BadListRequest("cursor is not one this server handed out"), 400, "Bad Request"),
    (BudgetError("unknown metric 'x'"), 400, "Bad Request"),
    (DuplicateBudget("lcp_ms on * already has a budget"), 409, "Conflict"),
    (AccountError("invalid service name"), 400, "Bad Request"),
    (AccountNotFound("no project with slug 'x' in this organization"), 404, "Not Found"),
    (KeyDecryptionError("a stored key cannot be decrypted"), 409, "Conflict"),
]


def _raising(exc: Exception) -> Callable[[FastAPI], None]:
    def install(app: FastAPI) -> None:
        @app.get("/api/boom")
        def api_boom() -> None:
            raise exc

        @app.get("/boom")
        def page_boom() -> None:
            raise exc

    return install


@pytest.mark.parametrize(
    ("exc", "status", "word"), CASES, ids=lambda v: type(v).__name__ if isinstance(v, Exception) else None
)
def test_each_kind_answers_with_its_status_and_own_message(
    settings: Settings, exc: Exception, status: int, word: str
) -> None:
    with TestClient(create_app(settings, installers=[_raising(exc)])) as client:
        answer = client.get("/api/boom")
    assert answer.status_code == status
    assert answer.json() == {"error": word, "detail": str(exc)}
    assert (answer.headers.get("retry-after") == "30") == (status == 503)


def test_every_kind_of_stacklens_errors_is_mapped() -> None:
    kinds = {kind for kind, _, _ in DOMAIN_ERRORS}
    assert {InvalidInput, NotFound, Conflict, Forbidden, Gone, Unavailable, StackLensError} <= kinds
    assert DOMAIN_ERRORS[-1][0] is StackLensError  # the catch-all comes last


def test_pages_show_domain_errors_as_pages_and_the_api_keeps_json(settings: Settings) -> None:
    app = build_app(settings)
    _raising(NotFound("no such share link"))(app)
    with TestClient(app) as client:
        page = client.get("/boom")
        api = client.get("/api/boom")
    assert page.status_code == 404 and "text/html" in page.headers["content-type"]
    assert "no such share link" in page.text
    assert api.status_code == 404 and api.json() == {"error": "Not Found", "detail": "no such share link"}
