"""Download one event as JSON or CSV (signed-in members of the organization only)."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from fastapi import APIRouter, HTTPException
from fastapi.responses import Response

from dashboards.context import CurrentProject
from dashboards.routers.issue_detail import ISSUE, load_issue
from stacklens.issues import payload_view as ev

router = APIRouter(include_in_schema=False)
# A cell starting with one of these is run as a formula by spreadsheet programs (CSV injection, OWASP).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def flatten(value: Any, prefix: str = "") -> list[tuple[str, str]]:
    """``{"a": {"b": [1]}}`` → ``[("a.b[0]", "1")]``: one CSV row per leaf."""
    if isinstance(value, dict):
        return [pair for k, v in value.items() for pair in flatten(v, f"{prefix}.{k}" if prefix else str(k))]
    if isinstance(value, list):
        return [pair for i, v in enumerate(value) for pair in flatten(v, f"{prefix}[{i}]")]
    return [(prefix, "" if value is None else str(value))]


def spreadsheet_safe(value: str) -> str:
    """Prefix a would-be formula with ``'`` so spreadsheets show it as text."""
    return f"'{value}" if value.startswith(FORMULA_STARTS) else value


@router.get(ISSUE + "/events/{event_id}.{fmt}")
def download_event(view: CurrentProject, issue_id: int, event_id: str, fmt: str) -> Response:
    _, events = load_issue(view, issue_id)
    row = events.get(event_id)
    if row is None or fmt not in ("json", "csv"):
        raise HTTPException(status_code=404, detail="Not Found")
    document = {
        "event_id": row["event_id"],
        "issue_id": issue_id,
        "timestamp": row["timestamp"].isoformat() + "Z",
        "received_at": row["received_at"].isoformat() + "Z",
        "payload": ev.load_payload(row["payload"]),
    }
    name = f"event-{row['event_id']}.{fmt}"
    headers = {"Content-Disposition": f'attachment; filename="{name}"'}
    if fmt == "json":
        return Response(json.dumps(document, indent=2), media_type="application/json", headers=headers)
    buffer = io.StringIO()
    writer = csv.writer(buffer)  # quotes commas, quotes and line breaks inside values
    writer.writerow(["field", "value"])
    for key, value in flatten(document):
        writer.writerow([spreadsheet_safe(key), spreadsheet_safe(value)])
    return Response(buffer.getvalue(), media_type="text/csv; charset=utf-8", headers=headers)
