"""The trace page's spans as data for its windowed waterfall (dashboards/static/traces.js): one compact list
per span in tree order, read by the page's own script from a ``<script type="application/json">`` block (never
executed; ``json_block`` escapes every markup character). The script draws only the rows in view — a trace of
5,000 spans is some forty rows in the document, not 5,000 (bench/traces.py) — and writes every value with
``textContent``, so a span's text is never markup. Times are written here, by the metrics layer's units."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from stacklens.metrics import units
from stacklens.traces.reads import Trace
from stacklens.traces.tree import TraceSpan

COLOURS = 10  # traces.css has c0 … c9

# Flags of a row (a bit each), as traces.js reads them.
CRITICAL, ORPHAN, FAILED, PAGELOAD = 1, 2, 4, 8

# The position of each value in a row's list (traces.js names the same positions).
FIELDS = (
    "span_id",
    "parent_span_id",  # an orphan's missing parent; '' otherwise (a row's parent is the row it is under)
    "depth",
    "service",  # index into the data's services (its colour: index mod COLOURS)
    "op",
    "description",
    "start_ms",
    "duration_ms",
    "start_text",
    "duration_text",
    "flags",
    "status",
    "status_code",
    "project",  # index into the data's projects (slugs)
    "transaction_event_id",  # a page load's event (its waterfall), '' otherwise
    "logs",  # log records written in the span
    "errors",  # [[issue id, title], …] of error events written in the span
)


@lru_cache(maxsize=8192)
def ms(value: float) -> str:
    """A time in ms as every page writes it (spans of a trace share many start offsets)."""
    return units.format_in(units.MS, value)


def _flags(s: TraceSpan) -> int:
    row = s.row
    pageload = row.is_transaction and row.op in ("pageload", "navigation")
    return (
        (CRITICAL if s.critical else 0)
        | (ORPHAN if s.orphan else 0)
        | (FAILED if s.failed else 0)
        | (PAGELOAD if pageload else 0)
    )


def trace_data(trace: Trace, projects: dict[int, str], org: str) -> dict[str, Any]:
    """What traces.js draws of ``trace``: its spans (rooted trees, then orphan subtrees from ``orphanStart``),
    services in colour order, project slugs, the trace's length."""
    services = [s.name for s in sorted(trace.services, key=lambda s: s.index)]
    service_index = {s.name: s.index for s in trace.services}
    slugs: list[str] = []
    slug_index: dict[int, int] = {}
    errors_of: dict[str, list[list[Any]]] = {}
    for error in trace.errors:
        errors_of.setdefault(error.span_id, []).append([int(error.issue_id), error.title])
    logs_of: dict[str, int] = {}
    for log in trace.logs:
        logs_of[log.span_id] = logs_of.get(log.span_id, 0) + 1
    rows: list[list[Any]] = []
    for s in trace.spans:
        row = s.row
        project = slug_index.get(row.project_id)
        if project is None:
            project = slug_index[row.project_id] = len(slugs)
            slugs.append(projects.get(row.project_id, ""))
        flags = _flags(s)
        rows.append(
            [
                s.span_id,
                row.parent_span_id if s.orphan else "",
                s.depth,
                service_index[s.service],
                row.op,
                row.description,
                round(s.start_ms, 3),
                round(row.duration_ms, 3),
                ms(s.start_ms),
                ms(row.duration_ms),
                flags,
                row.status,
                row.status_code,
                project,
                row.transaction_event_id if flags & PAGELOAD else "",
                logs_of.get(s.span_id, 0),
                errors_of.get(s.span_id, []),
            ]
        )
    return {
        "org": org,
        "trace": trace.trace_id,
        "total": trace.tree.duration_ms,
        "services": services,
        "projects": slugs,
        "orphanStart": orphan_start(trace.spans),
        "rows": rows,
    }


def orphan_start(spans: Sequence[TraceSpan]) -> int:
    """The index of the first orphan subtree's head (tree order puts them after the rooted trees)."""
    return next((i for i, s in enumerate(spans) if s.orphan), len(spans))
