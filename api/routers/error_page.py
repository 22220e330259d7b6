"""Sentry's crash-report dialog against StackLens (docs/feedback.md): ``Sentry.showReportDialog({eventId})``
loads ``GET /api/embed/error-page/?dsn=…&eventId=…`` as a script, which shows the form; the form posts
``name``, ``email`` and ``comments`` back to the same URL, and the report is kept as the event's feedback.

Authentication is the DSN's public key, as for envelopes: the key must be a current app key of the DSN's
project. Both answers carry CORS headers (the SDK loads the script with ``crossorigin="anonymous"``)."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, Field
from starlette.concurrency import run_in_threadpool

from api.deps import app_settings
from api.errors import ApiError
from api.routers.auth import ErrorBody
from stacklens.control.keys.dsn_callers import dsn_caller
from stacklens.feedback.intake import Extras, keep_extras
from stacklens.feedback.items import FeedbackRefused, dialog_report, hex_id
from stacklens.outcomes.counting import Outcomes
from stacklens.outcomes.tally import count_outcomes

router = APIRouter(prefix="/api", tags=["sentry protocol"])
SCRIPT = (Path(__file__).parent.parent / "static" / "error_page.js").read_bytes()
CORS = {"Access-Control-Allow-Origin": "*", "Access-Control-Allow-Methods": "GET, POST, OPTIONS"}
ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorBody, "description": "No `dsn` or `eventId`, or a report without comments"},
    403: {"model": ErrorBody, "description": "The DSN's key is not a current app key of its project"},
    413: {"model": ErrorBody, "description": "Comments over 4,096 characters"},
}
MAX_FORM_BYTES = 64 * 1024


class DialogAnswer(BaseModel):
    ok: bool = Field(description="The report was kept as the event's feedback.")


def _refused(status: int, word: str, detail: str) -> ApiError:
    return ApiError(status, word, detail, dict(CORS))


def _caller(settings: Any, dsn: str, event_id: str) -> tuple[int, int]:
    """The DSN's organization and project (403 when its key is not a current app key of the project)."""
    if not dsn:
        raise _refused(400, "Bad Request", "dsn: the query needs the DSN of the project (?dsn=…)")
    if not hex_id(event_id):
        raise _refused(400, "Bad Request", "eventId: the query needs the id of the event the report is about")
    try:
        parts = urlsplit(dsn)
        key, project = parts.username or "", parts.path.rstrip("/").rsplit("/", 1)[-1]
    except ValueError:
        key, project = "", ""
    found = dsn_caller(settings, key) if key else None
    if found is None or str(found.identity.project_id) != project:
        raise _refused(403, "Forbidden", "dsn: its key is not a current app key of its project")
    return found.identity.org_id, found.identity.project_id


@router.get(
    "/embed/error-page/",
    response_class=Response,
    responses={**ERRORS, 200: {"content": {"text/javascript": {}}, "description": "The dialog's script."}},
)
def error_page_script(request: Request, dsn: str = "", eventId: str = "") -> Response:  # noqa: N803 - Sentry's name
    """The crash-report dialog's script (what `Sentry.showReportDialog` loads)."""
    _caller(app_settings(request), dsn, eventId)
    headers = {**CORS, "Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"}
    return Response(SCRIPT, media_type="text/javascript; charset=utf-8", headers=headers)


async def _form(request: Request) -> dict[str, Any]:
    if int(request.headers.get("content-length") or 0) > MAX_FORM_BYTES:
        raise _refused(413, "Payload Too Large", f"the report is over {MAX_FORM_BYTES // 1024} KiB")
    if (request.headers.get("content-type") or "").startswith("application/json"):
        try:
            body = await request.json()
        except ValueError:
            raise _refused(400, "Bad Request", "the body is not JSON") from None
        return body if isinstance(body, dict) else {}
    form = await request.form()
    return {k: v for k, v in form.items() if isinstance(v, str)}


@router.post("/embed/error-page/", response_model=DialogAnswer, responses=ERRORS)
async def error_page_report(request: Request, dsn: str = "", eventId: str = "") -> Response:  # noqa: N803
    """A report from the dialog: `name`, `email`, `comments` (form or JSON), kept as the event's feedback."""
    settings = app_settings(request)
    org_id, project_id = await run_in_threadpool(_caller, settings, dsn, eventId)
    form = await _form(request)
    try:
        report = dialog_report(eventId, form.get("name"), form.get("email"), form.get("comments"))
    except FeedbackRefused as refused:
        outcome = "too_large" if refused.status == 413 else "invalid"
        counts: Outcomes = Counter({(project_id, "feedback", outcome, refused.reason): 1})
        count_outcomes(settings, org_id, counts)
        word = "Payload Too Large" if refused.status == 413 else "Bad Request"
        raise _refused(refused.status, word, f"comments: {refused}") from None
    extras = Extras(org_id, project_id, report.event_id, [report])
    await run_in_threadpool(keep_extras, settings, extras, datetime.now(UTC))
    count_outcomes(settings, org_id, extras.accepted())
    return JSONResponse({"ok": True}, headers=CORS)


@router.options("/embed/error-page/", include_in_schema=False)
def error_page_preflight() -> Response:
    return Response(status_code=200, headers={**CORS, "Access-Control-Allow-Headers": "content-type"})
