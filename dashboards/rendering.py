"""Jinja2 rendering for the dashboard pages: autoescaping on, page data as escaped JSON blocks.

Event data is attacker-controlled. Templates never mark it ``|safe``; JSON handed to the browser goes through
:func:`json_block`, which escapes ``<``, ``>`` and ``&`` so a ``</script>`` inside an event cannot close the
block, and the browser parses it with ``JSON.parse`` (the CSP forbids inline scripts anyway).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from fastapi.templating import Jinja2Templates
from markupsafe import Markup, escape
from starlette.requests import Request
from starlette.responses import HTMLResponse

from dashboards.security import CSRF_FIELD, csrf_token
from stacklens.alerts.messages import value_text
from stacklens.metrics import units
from stacklens.metrics.formatting import format_value

TEMPLATES_DIR = Path(__file__).parent / "templates"


def json_block(value: Any) -> Markup:
    """JSON that is safe inside ``<script type="application/json">`` (no tag or entity can break out)."""
    text = json.dumps(value, default=str, separators=(",", ":"))
    text = text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")
    text = text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return Markup(text)  # safe: every markup-significant character is escaped above


def csrf_input(request: Request) -> Markup:
    token = csrf_token(request)
    return Markup('<input type="hidden" name="{}" value="{}">').format(CSRF_FIELD, token)


def query_url(path: str, params: dict[str, Any], **changes: Any) -> str:
    """``path`` with ``params`` updated by ``changes`` (``None`` drops a key), for filter and sort links."""
    merged = {**params, **changes}
    clean = {k: v for k, v in merged.items() if v not in (None, "")}
    return f"{path}?{urlencode(clean, doseq=True)}" if clean else path


def fmt_time(value: Any) -> str:
    if isinstance(value, datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        return str(value.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC"))
    return "" if value is None else str(value)


def sparkline_points(counts: list[int], width: int = 120, height: int = 24) -> str:
    """SVG polyline points for a daily-count sparkline (numbers only, so nothing to escape)."""
    if not counts:
        return ""
    top = max(max(counts), 1)
    step = width / max(len(counts) - 1, 1)
    return " ".join(
        f"{i * step:.1f},{height - (c / top) * (height - 2) - 1:.1f}" for i, c in enumerate(counts)
    )


def sparkline_runs(values: list[float | None], width: int = 120, height: int = 24) -> list[str]:
    """SVG polyline points of a daily sparkline with gaps: one polyline per run of days that have a value,
    so a day without one (``None``) is a break in the line, never a dip to 0. A run of one day is a point
    drawn as a zero-length line (round caps make it a dot). Numbers only, so nothing to escape."""
    known = [v for v in values if v is not None]
    if not known:
        return []
    top = max(max(known), 1e-9)
    step = width / max(len(values) - 1, 1)
    runs: list[list[str]] = [[]]
    for i, value in enumerate(values):
        if value is None:
            if runs[-1]:
                runs.append([])
            continue
        runs[-1].append(f"{i * step:.1f},{height - (value / top) * (height - 2) - 1:.1f}")
    return [" ".join(run if len(run) > 1 else run * 2) for run in runs if run]


URL_SEGMENT = 40  # a path segment longer than this is shortened in the middle (the full URL is in the title)


def url_breaks(text: str) -> Markup:
    """``text`` escaped, each URL in it (a word with ``://``) wrapped so it may break after a ``/`` only —
    words never break mid-word — with a long segment shortened in the middle (``…``) and the full URL as
    its title."""
    words = []
    for word in str(text).split(" "):
        if "://" not in word:
            words.append(escape(word))
            continue
        scheme, _, rest = word.partition("://")
        host, *path = rest.split("/")
        pieces = [f"{scheme}://{host}", *path]  # the origin one piece: no break inside "https://"
        parts = [
            (p if len(p) <= URL_SEGMENT else f"{p[: URL_SEGMENT // 2 - 1]}…{p[-(URL_SEGMENT // 2 - 1) :]}")
            + ("/" if i < len(pieces) - 1 else "")
            for i, p in enumerate(pieces)
        ]
        # Each piece unbreakable (CSS white-space: nowrap: not even at its "-"), a break allowed between them.
        shown = Markup("<wbr>").join(Markup('<span class="url-part">{}</span>').format(p) for p in parts)
        words.append(Markup('<span class="url-text" title="{}">{}</span>').format(word, shown))
    return Markup(" ").join(words)


def metric_value(value: float | None, metric: str, statistic: str | None = None) -> str:
    """``{{ value|metric_value("lcp_ms") }}``: the metric catalog's writing of a value (``2,004.9 ms``)."""
    return format_value(metric, value, statistic)


def in_unit(value: float | None, unit: str, digits: int | None = None) -> str:
    """``{{ value|in_unit("ms") }}``: a value in a unit given by its symbol (``ms``, ``bytes``, ``%``; ``""``
    unitless) as the catalog writes that unit; another symbol is written after the number (``2.50 ×``)."""
    known = units.BY_SYMBOL.get(unit) or units.UNITS.get(unit)
    if known is not None:
        return units.format_in(known, value, digits)
    text = units.format_in(units.SCORE, value, digits or 0)
    return text if text == units.MISSING else f"{text} {unit}"


def rule_value(value: float | None, rule: Any) -> str:
    """``{{ value|rule_value(rule) }}``: a value or threshold of an alert rule as its notifications write
    it."""
    return value_text(rule, value) if value is not None else units.MISSING


templates = Jinja2Templates(directory=str(TEMPLATES_DIR))
templates.env.globals.update(csrf_input=csrf_input, json_block=json_block, query_url=query_url)
templates.env.filters.update(
    fmt_time=fmt_time,
    sparkline=sparkline_points,
    sparkline_runs=sparkline_runs,
    url_breaks=url_breaks,
    metric_value=metric_value,
    in_unit=in_unit,
    rule_value=rule_value,
    plain_number=units.plain_number,
    binary_size=units.binary_size,
)


def render(request: Request, name: str, context: dict[str, Any], status_code: int = 200) -> HTMLResponse:
    """Render ``name`` with ``context`` (the request and the signed-in user are added)."""
    return templates.TemplateResponse(request, name, context, status_code=status_code)
