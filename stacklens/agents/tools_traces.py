"""The trace tool: one trace from every source as one tree (the trace page's read,
:mod:`stacklens.traces.reads`), span descriptions, error titles and log bodies fenced as untrusted, at most
:data:`MAX_SPANS` spans (the critical path's first)."""

from __future__ import annotations

from typing import Any

from stacklens.agents.context import ToolContext
from stacklens.agents.untrusted import NOTE, fence
from stacklens.errors import NotFound
from stacklens.traces.answers import trace_out
from stacklens.traces.projects import project_slugs
from stacklens.traces.reads import read_trace

MAX_SPANS = 200
MAX_LOGS = 50


def get_trace(ctx: ToolContext, trace_id: str) -> dict[str, Any]:
    projects = project_slugs(ctx.session, ctx.org_id)
    trace = read_trace(ctx.warehouse, ctx.org_id, trace_id, projects)
    if trace is None:
        raise NotFound(f"trace_id: no trace {trace_id!r} in this organization")
    out: dict[str, Any] = dict(trace_out(trace, projects))
    critical = set(out["critical_path"])
    spans = sorted(out["spans"], key=lambda s: s["span_id"] not in critical)[:MAX_SPANS]
    out["spans"] = [{**s, "description": fence(s["description"])} for s in spans]
    out["errors"] = [{**e, "title": fence(e["title"])} for e in out["errors"]]
    out["logs"] = [{**entry, "body": fence(entry["body"])} for entry in out["logs"][:MAX_LOGS]]
    out["covers"] = {
        "trace_id": out["trace_id"],
        "spans": out["span_count"],
        "spans_shown": len(out["spans"]),
        "errors": len(out["errors"]),
        "services": [s["name"] for s in out["services"]],
    }
    out["untrusted"] = NOTE
    return out
