"""A plotly figure as the plain JSON a page embeds (``data-figure`` script blocks) and a test reads: one
conversion for every chart, so every figure reaches the template the same way."""

from __future__ import annotations

import json
from typing import Any

import plotly.graph_objects as go


def figure_json(figure: go.Figure) -> dict[str, Any]:
    """``figure`` in plain JSON types: plotly may hold numpy arrays, which neither the template nor a test
    takes."""
    plain: dict[str, Any] = json.loads(figure.to_json())
    return plain
