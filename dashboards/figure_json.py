"""A plotly figure as the plain JSON a page embeds (``data-figure`` script blocks) and a test reads: one
conversion for every chart, so every figure reaches the template the same way.

:func:`plain_figure` builds that JSON directly from plain traces, for figures drawn on every view (a
dashboard's widgets): a ``plotly.graph_objects`` figure validates every property it is given and its
``to_json`` walks the whole figure again: 13 of the 36 ms of CPU of a warm dashboard render at 1 M page loads
(bench/RESULTS.md, "analyst dashboards"), for the same JSON."""

from __future__ import annotations

import json
import math
from functools import cache
from typing import Any

import plotly.graph_objects as go


def figure_json(figure: go.Figure) -> dict[str, Any]:
    """``figure`` in plain JSON types: plotly may hold numpy arrays, which neither the template nor a test
    takes."""
    plain: dict[str, Any] = json.loads(figure.to_json())
    return plain


@cache
def _template_text() -> str:
    """The layout template ``to_json`` writes into every figure (plotly's default), as JSON text: read from
    plotly once, so a plain figure is styled exactly as a ``go.Figure`` is."""
    return json.dumps(figure_json(go.Figure())["layout"]["template"])


def plain_numbers(values: list[float | None]) -> list[float | None]:
    """``values`` as plotly's JSON writes them: NaN and infinities as null (JSON has neither)."""
    return [v if v is None or math.isfinite(v) else None for v in values]


def plain_trace(kind: str, properties: dict[str, Any]) -> dict[str, Any]:
    """A trace as ``to_json`` writes it: its properties in name order, then its ``type``. The properties must
    be plain JSON already (strings, numbers, lists, dicts; numbers through :func:`plain_numbers`)."""
    return {**dict(sorted(properties.items())), "type": kind}


def plain_figure(traces: list[dict[str, Any]]) -> dict[str, Any]:
    """A figure of ``traces`` (:func:`plain_trace`) with plotly's default layout, as :func:`figure_json` of
    the same ``go.Figure`` reads; the template is parsed anew for each figure, so a caller that changes one
    figure's layout changes no other."""
    return {"data": traces, "layout": {"template": json.loads(_template_text())}}
