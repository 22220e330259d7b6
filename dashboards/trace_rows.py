"""The trace page's rows as HTML, written here rather than in the template: a trace of 5,000 spans is 5,000
rows, and a Jinja macro per row took most of the page's time (bench/traces.py). Every value from a span is
escaped; bars are placed by class (traces.css: ``x<step>``, ``w<step>``, colour ``c<n>``), never by an
inline style, so the strict CSP holds."""

from __future__ import annotations

import html
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from markupsafe import Markup

from stacklens.metrics import units

COLOURS = 10  # traces.css has c0 … c9
# Rows past the first screens are marked `far`: the browser skips their layout and paint until they are
# scrolled near (content-visibility), so 5,000 rows open in the time of a few hundred.
NEAR_ROWS = 150


def escape(value: str) -> str:
    """``value`` safe in HTML text and quoted attributes (& < > " ' replaced)."""
    return html.escape(value, quote=True)


@lru_cache(maxsize=4096)
def _ms(value: float) -> str:
    """A time in ms as every page writes it (spans of a trace share their start offsets and names)."""
    return units.format_in(units.MS, value)


@lru_cache(maxsize=1024)
def _label(service: str, op: str, colour: int) -> str:
    return (
        f'<i class="swatch c{colour}"></i><b class="trace-service">{escape(service)}</b> '
        f'<span class="trace-op">{escape(op or "span")}</span> '
    )


def span_rows(rows: Iterable[dict[str, Any]], org: str, trace_id: str) -> Markup:
    """One ``div.trace-row`` per span of ``rows`` (page_context's rows)."""
    out: list[str] = []
    org_e, trace_e = escape(org), escape(trace_id)
    for n, r in enumerate(rows):
        s = r["span"]
        row = s.row
        c = r["colour_index"] % COLOURS
        classes = "trace-row" + (" critical" if s.critical else "") + (" orphan" if s.orphan else "")
        classes += (" failed" if s.failed else "") + (" far" if n >= NEAR_ROWS else "")
        project = escape(r["project"])
        badges = []
        if s.orphan:
            badges.append(
                f'<span class="badge orphan-badge" title="its parent span {escape(row.parent_span_id)} was never '
                f'received">orphan</span>'
            )
        for e in r["errors"]:
            badges.append(
                f'<a class="badge error-badge" href="/orgs/{org_e}/projects/{project}/issues/{int(e.issue_id)}" '
                f'title="{escape(e.title)}">error</a>'
            )
        if r["logs"]:
            plural = "s" if r["logs"] != 1 else ""
            badges.append(
                f'<a class="badge log-badge" href="/orgs/{org_e}/projects/{project}/logs?trace_id={trace_e}'
                f'&amp;range=30d">{int(r["logs"])} log{plural}</a>'
            )
        if row.is_transaction and row.op in ("pageload", "navigation"):
            badges.append(
                f'<a class="badge" href="/orgs/{org_e}/projects/{project}/performance/waterfall/'
                f'{escape(row.transaction_event_id)}">page load</a>'
            )
        details = f"starts at {_ms(s.start_ms)}" + (f" · status {escape(row.status)}" if row.status else "")
        details += f" · HTTP {row.status_code}" if row.status_code else ""
        details += " · on the critical path" if s.critical else ""
        description = escape(row.description)
        bar = r["bar"]
        out.append(
            f'<div class="{classes}" id="span-{escape(s.span_id)}"><div class="trace-label {r["depth"]}">'
            f"{_label(s.service, row.op, c)}"
            f'<span class="trace-desc" title="{description} · {details}">'
            f"{description}</span>{''.join(badges)}</div>"
            f'<div class="trace-bar"><i class="bar c{c} x{bar.x} w{bar.width}"></i></div>'
            f'<div class="trace-dur">{_ms(row.duration_ms)}</div></div>'
        )
    return Markup("\n".join(out))
