"""The audit trail of agent calls (`GET /api/audit?source=mcp`, the owners' audit page).

Every tool call — answered, refused (scope, role), over a budget or failed — is one entry of the activity
log with action ``mcp.call``: who (member's e-mail, token), which client, the tool, a digest of its
arguments (SHA-256 of their canonical JSON: comparable between calls, never the values), rows and bytes
read in the warehouse, duration and outcome. One log, so the activity page shows the calls too.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from sqlalchemy.orm import Session

from stacklens.agents.tokens import AgentIdentity
from stacklens.control.activity import record_activity

ACTION = "mcp.call"
OUTCOMES = ("ok", "error", "refused", "over_budget")


def arguments_digest(arguments: object) -> str:
    canonical = json.dumps(arguments, sort_keys=True, separators=(",", ":"), default=str)
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class CallRecord:
    tool: str
    arguments_digest: str
    rows: int
    bytes: int
    duration_ms: float
    outcome: str
    error: str = ""


def record_call(session: Session, identity: AgentIdentity, client: str, call: CallRecord) -> None:
    detail: dict[str, Any] = {
        "email": identity.email,
        "token_id": identity.token_id,
        "token_kind": identity.kind,
        "client": client or identity.client,
        "tool": call.tool,
        "arguments_digest": call.arguments_digest,
        "rows": call.rows,
        "bytes": call.bytes,
        "duration_ms": round(call.duration_ms, 1),
        "outcome": call.outcome,
    }
    if call.error:
        detail["reason"] = call.error[:300]
    record_activity(session, identity.org_id, ACTION, "", None, identity.user_id, detail)


def summary(detail: dict[str, Any]) -> str:
    """One sentence per call, for the audit page and the API's ``summary``."""
    who = detail.get("email") or "the organization's API key"
    via = f" via {detail['client']}" if detail.get("client") else ""
    outcome = detail.get("outcome", "ok")
    read = f"{detail.get('rows', 0):,} rows, {detail.get('bytes', 0):,} bytes read"
    took = f"{detail.get('duration_ms', 0)} ms"
    if outcome == "ok":
        return f"{who}{via} called {detail.get('tool')} ({read}, {took})."
    return f"{who}{via} called {detail.get('tool')}: {outcome} — {detail.get('reason', '')} ({took})."
