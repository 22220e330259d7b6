"""What the trace page draws (docs/traces.md): each span's bar as a share of the trace's length in steps of
0.25 % (classes of traces.css, not inline styles: the strict CSP), the services in the order the tree reaches
them (colour ``c<index mod 10>``), the time axis."""

from __future__ import annotations

from typing import Any, NamedTuple

from dashboards.trace_rows import span_rows
from stacklens.metrics import units
from stacklens.traces.reads import Trace, TraceError

STEPS = 400  # bars are placed in steps of 0.25 % of the row (traces.css has a class per step)
MAX_DEPTH_CLASS = 16  # the deepest indentation step the stylesheet has
SHOWN_LOGS = 100  # the page lists the first records; the logs view has them all


class Bar(NamedTuple):
    """A bar's offset and width in steps of 1/STEPS of the row (a 0 ms span still one step wide)."""

    x: int
    width: int


def bar(start_ms: float, duration_ms: float, total_ms: float) -> Bar:
    total = total_ms if total_ms > 0 else 1.0
    x = min(STEPS - 1, max(0, int(start_ms / total * STEPS)))
    width = max(1, min(STEPS - x, round(duration_ms / total * STEPS)))
    return Bar(x, width)


def ticks(total_ms: float, count: int = 5) -> list[str]:
    """The time axis' labels at 0, ¼, ½, ¾ and the end of the trace."""
    return [units.format_in(units.MS, total_ms * i / (count - 1)) for i in range(count)]


def depth_class(depth: int) -> str:
    return f"d{min(depth, MAX_DEPTH_CLASS)}"


def page_context(trace: Trace, projects: dict[int, str], org: str) -> dict[str, Any]:
    """What trace.html draws of ``trace``: a row per span (bar, colour, indentation, the errors and log
    records written in it), rooted spans apart from orphan subtrees, the services' legend and the axis."""
    total = trace.tree.duration_ms
    indexes = {s.name: s.index for s in trace.services}
    errors_of: dict[str, list[TraceError]] = {}
    for error in trace.errors:
        errors_of.setdefault(error.span_id, []).append(error)
    logs_of: dict[str, int] = {}
    for log in trace.logs:
        logs_of[log.span_id] = logs_of.get(log.span_id, 0) + 1
    rows = [
        {
            "span": s,
            "bar": bar(s.start_ms, s.row.duration_ms, total),
            "colour_index": indexes[s.service],
            "depth": depth_class(s.depth),
            "project": projects.get(s.row.project_id, ""),
            "errors": errors_of.get(s.span_id, []),
            "logs": logs_of.get(s.span_id, 0),
        }
        for s in trace.spans
    ]
    orphan_start = next((i for i, s in enumerate(trace.spans) if s.orphan), len(rows))
    return {
        "trace": trace,
        "total_ms": total,
        "rows": span_rows(rows[:orphan_start], org, trace.trace_id),
        "orphan_rows": span_rows(rows[orphan_start:], org, trace.trace_id),
        "orphan_spans": len(rows) - orphan_start,
        "services": trace.services,
        "ticks": ticks(total),
        "projects": projects,
        "shown_logs": trace.logs[:SHOWN_LOGS],
        "log_projects": sorted({projects[g.project_id] for g in trace.logs if g.project_id in projects}),
        "critical_count": sum(1 for s in trace.spans if s.critical),
    }
