"""Explore's time series as Plotly figures: one figure per aggregate, one line per group, only the buckets
that hold rows (a gap stays a gap: no line is drawn through a missing bucket, and it is never a 0). The
axis carries the column's unit (``LCP p75 (ms)``), the hover the value as the catalog writes it and the
samples behind it, the title the figure's sample count."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

import plotly.graph_objects as go

from stacklens.explore.answer import SeriesLine
from stacklens.explore.columns import Column

MAX_LINES = 10  # a legend of more lines is unreadable; the table holds every group


def _iso(value: datetime) -> str:
    return value.isoformat().replace("+00:00", "Z")  # as the series' times are written


def _name(group: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in group.items()) or "all"


def _with_gaps(times: list[str], step: float, *columns: list[Any]) -> list[list[Any]]:
    """``[times, *columns]`` with a None between two points more than one bucket apart, so the line breaks."""
    out: list[list[Any]] = [[] for _ in range(len(columns) + 1)]
    previous: datetime | None = None
    for i, t in enumerate(times):
        current = datetime.fromisoformat(t.replace("Z", "+00:00"))
        if previous is not None and (current - previous).total_seconds() > step * 1.5:
            for part in out:
                part.append(None)
        out[0].append(t)
        for part, column in zip(out[1:], columns, strict=True):
            part.append(column[i])
        previous = current
    return out


def _shifted(times: list[str], shift: timedelta) -> list[str]:
    return [_iso(datetime.fromisoformat(t.replace("Z", "+00:00")) + shift) for t in times]


def explore_figures(
    series: list[SeriesLine],
    columns: list[Column],
    step_seconds: float,
    window: tuple[datetime, datetime] | None = None,
    previous: tuple[list[SeriesLine], timedelta] | None = None,
    previous_label: str = "previous period",
) -> dict[str, dict[str, Any]]:
    """``{id: figure}`` for each aggregate column of the series, with its sample count in the title: the
    values an aggregate over a metric summarises (page loads that report LCP for an LCP p75), else the
    rows. The x axis spans the query's ``window``, so a window with data on one day shows that day in its
    place, not a zoom. ``previous`` (the compared window's series and how far to shift them) overlays each
    line's previous period, dotted, on the same x axis (its hover gives the bucket's own time), named with
    ``previous_label`` (the release compared with, for "release N against N−1")."""
    figures: dict[str, dict[str, Any]] = {}
    shown = series[:MAX_LINES]
    for index, column in enumerate(columns):
        figure = go.Figure()
        samples = 0
        for entry in shown:
            counts = entry.get("counts", {}).get(column.key) or entry["samples"]
            samples += sum(counts)
            values = entry["values"][column.key]
            texts = [column.format(v) for v in values]
            xs, ys, text, ns = _with_gaps(entry["t"], step_seconds, values, texts, counts)
            figure.add_trace(
                go.Scatter(
                    x=xs,
                    y=ys,
                    customdata=[[t, n] for t, n in zip(text, ns, strict=True)],
                    mode="lines+markers",
                    connectgaps=False,
                    name=_name(entry["group"]),
                    hovertemplate="%{x}<br>%{customdata[0]}<br>n=%{customdata[1]:,}<extra>%{fullData.name}</extra>",
                )
            )
        wanted = {json.dumps(entry["group"], sort_keys=True) for entry in shown}
        earlier, shift = previous if previous else ([], timedelta(0))
        for entry in earlier:
            if json.dumps(entry["group"], sort_keys=True) not in wanted:
                continue
            values = entry["values"][column.key]
            texts = [column.format(v) for v in values]
            times, ys, text, own = _with_gaps(
                _shifted(entry["t"], shift), step_seconds, values, texts, entry["t"]
            )
            figure.add_trace(
                go.Scatter(
                    x=times,
                    y=ys,
                    customdata=[[t, o] for t, o in zip(text, own, strict=True)],
                    mode="lines",
                    connectgaps=False,
                    line={"dash": "dot", "width": 1.5},
                    opacity=0.7,
                    name=f"{_name(entry['group'])} ({previous_label})",
                    hovertemplate="%{customdata[1]}<br>%{customdata[0]}<extra>%{fullData.name}</extra>",
                )
            )
        figure.update_layout(
            title={
                "text": f"{column.header} · {samples:,} samples",
                "font": {"size": 13},
                "x": 0,
                "xanchor": "left",
            },
            height=300,
            margin={"l": 64, "r": 10, "t": 34, "b": 46},
            xaxis={"type": "date", **({"range": [_iso(t) for t in window]} if window else {})},
            yaxis={"rangemode": "tozero", "title": {"text": column.header, "font": {"size": 11}}},
            legend={"orientation": "h", "y": -0.2},
            plot_bgcolor="#fff",
        )
        figures[f"explore-{index}"] = json.loads(figure.to_json())
    return figures
