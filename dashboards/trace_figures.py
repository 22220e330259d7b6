"""What the trace page shows (docs/traces.md): the head (services in the order the tree reaches them, colour
``c<index mod 10>``, counts), the time axis, and the spans as data for the page's windowed waterfall
(dashboards/trace_rows.py, dashboards/static/traces.js)."""

from __future__ import annotations

from typing import Any

from dashboards.trace_rows import orphan_start, trace_data
from stacklens.metrics import units
from stacklens.traces.reads import Trace

SHOWN_LOGS = 100  # the page lists the first records; the logs view has them all


def ticks(total_ms: float, count: int = 5) -> list[str]:
    """The time axis' labels at 0, ¼, ½, ¾ and the end of the trace."""
    return [units.format_in(units.MS, total_ms * i / (count - 1)) for i in range(count)]


def page_context(trace: Trace, projects: dict[int, str], org: str) -> dict[str, Any]:
    """What trace.html draws of ``trace``: the spans' data (rooted spans, then orphan subtrees), the
    services' legend, the axis, the errors, log records and replays of the trace."""
    spans = trace.spans
    start = orphan_start(spans)
    return {
        "trace": trace,
        "total_ms": trace.tree.duration_ms,
        "trace_data": trace_data(trace, projects, org),
        "rooted_spans": start,
        "orphan_spans": len(spans) - start,
        "services": trace.services,
        "ticks": ticks(trace.tree.duration_ms),
        "projects": projects,
        "shown_logs": trace.logs[:SHOWN_LOGS],
        "log_projects": sorted({projects[g.project_id] for g in trace.logs if g.project_id in projects}),
        "critical_count": sum(1 for s in spans if s.critical),
        "failed_count": sum(1 for s in spans if s.failed),
    }
