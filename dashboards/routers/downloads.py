"""Download one event as JSON or CSV (signed-in members of the organization only)."""

from __future__ import annotations

import json
from typing import Any

from fastapi import APIRouter, HTTPException
from fastapi.responses import Response

from dashboards.context import CurrentProject
from dashboards.routers.issue_detail import ISSUE, load_issue
from stacklens.csv_cells import csv_text
from stacklens.issues import payload_view as ev

router = APIRouter(include_in_schema=False)


def flatten(value: Any, prefix: str = "") -> list[tuple[str, Any]]:
    """``{"a": {"b": [1]}}`` → ``[("a.b[0]", 1)]``: one CSV row per leaf (numbers stay numbers)."""
    if isinstance(value, dict):
        return [pair for k, v in value.items() for pair in flatten(v, f"{prefix}.{k}" if prefix else str(k))]
    if isinstance(value, list):
        return [pair for i, v in enumerate(value) for pair in flatten(v, f"{prefix}[{i}]")]
    return [(prefix, value)]


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
    body = csv_text(("field", "value"), flatten(document))  # every text cell neutralised against formulas
    return Response(body, media_type="text/csv; charset=utf-8", headers=headers)
