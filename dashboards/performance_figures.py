"""Plotly figures of the performance pages. Python builds each figure; the page hands its JSON to plotly.js
(no inline script). Points from fewer than MIN_SAMPLES samples are drawn grey, never dropped."""

from __future__ import annotations

import json
from datetime import date, timedelta
from typing import Any
from urllib.parse import urlsplit

import plotly.graph_objects as go

from stacklens.performance.score import MIN_SAMPLES

ACCENT = "#0b5cad"
GREY = "#b6bcc4"
TYPE_COLOURS = {
    "JavaScript": "#d4a017",
    "CSS": "#7b3fb5",
    "Images": "#2e8b57",
    "Fonts": "#8a5a44",
    "API": "#c2410c",
    "Other": "#6b7280",
}
PHASE_COLOUR = "#94a3b8"


def _layout(
    figure: go.Figure,
    title: str,
    y_title: str,
    height: int = 240,
    yaxis: dict[str, Any] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    figure.update_layout(
        title={"text": title, "font": {"size": 13}, "x": 0, "xanchor": "left"},
        height=height,
        margin={"l": 56, "r": 10, "t": 34, "b": 40},
        yaxis=yaxis or {"title": {"text": y_title}, "rangemode": "tozero"},
        plot_bgcolor="#fff",
        showlegend=False,
        **extra,
    )
    return json.loads(figure.to_json())  # plain JSON types (plotly may hold numpy arrays)


def _colours(counts: list[int]) -> list[str]:
    return [ACCENT if n >= MIN_SAMPLES else GREY for n in counts]


def series_figure(
    rows: list[dict[str, Any]], x: str, y: str, n: str, title: str, unit: str
) -> dict[str, Any]:
    """A line over time (days or weeks) of ``y`` with its sample count in the hover; thin points grey."""
    points = [r for r in rows if r.get(y) is not None]
    counts = [int(r[n]) for r in points]
    figure = go.Figure(
        go.Scatter(
            x=[str(r[x]) for r in points],
            y=[r[y] for r in points],
            mode="lines+markers",
            line={"color": ACCENT, "width": 1.5},
            marker={"color": _colours(counts), "size": 7},
            customdata=counts,
            hovertemplate="%{x}<br>%{y:.4~r} " + unit + "<br>%{customdata} samples<extra></extra>",
        )
    )
    if x == "iso_week":
        return _layout(figure, title, unit, xaxis={"type": "category"})
    return _layout(figure, title, unit, xaxis=_day_axis([str(r[x]) for r in points]))


def _day_axis(days: list[str]) -> dict[str, Any]:
    """A date axis of daily points. With one day alone plotly would zoom to milliseconds around it (ticks
    like 23:59:59.999); a day either side keeps the ticks on days."""
    axis: dict[str, Any] = {"type": "date"}
    if len(set(days)) == 1:
        only = date.fromisoformat(days[0][:10])
        axis.update(
            range=[(only - timedelta(days=1)).isoformat(), (only + timedelta(days=1)).isoformat()],
            dtick=86_400_000,
            tickformat="%b %d, %Y",
        )
    return axis


def bars_figure(
    labels: list[str],
    values: list[float],
    counts: list[int],
    title: str,
    unit: str,
    colours: list[str] | None = None,
) -> dict[str, Any]:
    figure = go.Figure(
        go.Bar(
            x=labels,
            y=values,
            marker_color=colours or _colours(counts),
            customdata=counts,
            hovertemplate="%{x}<br>%{y:.4~r} " + unit + "<br>%{customdata} samples<extra></extra>",
        )
    )
    return _layout(figure, title, unit, xaxis={"type": "category"})


def distribution_figure(buckets: list[dict[str, Any]], title: str, unit: str) -> dict[str, Any]:
    """Page loads per bucket of one metric (log-scale buckets for times)."""
    figure = go.Figure(
        go.Bar(
            x=[(b["from"] * b["to"]) ** 0.5 if unit == "ms" else (b["from"] + b["to"]) / 2 for b in buckets],
            y=[b["loads"] for b in buckets],
            width=[b["to"] - b["from"] for b in buckets],
            marker_color=ACCENT,
            customdata=[[b["from"], b["to"]] for b in buckets],
            hovertemplate="%{customdata[0]:.4~r} to %{customdata[1]:.4~r} "
            + unit
            + "<br>%{y} page loads<extra></extra>",
        )
    )
    xaxis = {"type": "log", "title": {"text": unit}} if unit == "ms" else {"title": {"text": unit}}
    return _layout(figure, title, "page loads", xaxis=xaxis)


def types_figure(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Bytes per resource type (encoded body), coloured by type."""
    return bars_figure(
        [r["resource_type"] for r in rows],
        [r["total_bytes"] / 1024 / 1024 for r in rows],
        [r["requests"] for r in rows],
        "Bytes per resource type (MiB, encoded)",
        "MiB",
        [TYPE_COLOURS.get(r["resource_type"], "#6b7280") for r in rows],
    )


def releases_figure(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Load time p75 per release (bars, grey when thin) with JavaScript KiB per view (line, right axis)."""
    names = [r["release"] for r in rows]
    figure = go.Figure()
    figure.add_bar(
        x=names,
        y=[r["load_p75"] for r in rows],
        name="load p75 (ms)",
        marker_color=[
            "#b42318" if r["regression"] else c
            for r, c in zip(rows, _colours([r["views"] for r in rows]), strict=True)
        ],
        customdata=[r["views"] for r in rows],
        hovertemplate="%{x}<br>load p75 %{y:.0f} ms<br>%{customdata} page loads<extra></extra>",
    )
    figure.add_scatter(
        x=names,
        y=[(r["js_bytes_per_view"] or 0) / 1024 for r in rows],
        name="JavaScript per view (KiB)",
        yaxis="y2",
        mode="lines+markers",
        line={"color": TYPE_COLOURS["JavaScript"]},
        hovertemplate="%{x}<br>%{y:.0f} KiB JavaScript per view<extra></extra>",
    )
    return _layout(
        figure,
        "Load time p75 and JavaScript per release (red: regression)",
        "load p75 (ms)",
        height=280,
        xaxis={"type": "category"},
        yaxis2={
            "title": {"text": "JS KiB / view"},
            "overlaying": "y",
            "side": "right",
            "rangemode": "tozero",
        },
    )


def span_label(description: str, op: str, limit: int = 40) -> str:
    """A waterfall row's name: a file by its name (``app.js``), an API call by its method and path
    (``GET /api/products/0``: the last path segment alone, often an id, says nothing), the span's op when it has
    no description; a long name keeps its end."""
    method, _, rest = description.strip().partition(" ")
    if not (rest and method.isalpha() and method.isupper()):
        method, rest = "", description.strip()
    path = urlsplit(rest).path if "://" in rest else rest.split("?", 1)[0]
    if method:
        name = f"{method} {path or '/'}"
    else:
        name = path.rstrip("/").rsplit("/", 1)[-1] or path or op
    return name if len(name) <= limit else "…" + name[-(limit - 1) :]


def waterfall_figure(data: dict[str, Any]) -> dict[str, Any]:
    """Phases then spans as horizontal bars from their offset; blocking resources outlined red; FCP/LCP lines."""
    labels, starts, widths, colours, lines, texts = [], [], [], [], [], []
    for phase in data["phases"]:
        labels.append(phase["phase"])
        starts.append(phase["start_ms"])
        widths.append(max(phase["end_ms"] - phase["start_ms"], 1.0))
        colours.append(PHASE_COLOUR)
        lines.append(0)
        texts.append(f"{phase['phase']}: {phase['start_ms']:.0f}–{phase['end_ms']:.0f} ms")
    for i, span in enumerate(data["spans"]):
        labels.append(f"{i + 1}. {span_label(span['description'], span['op'])}")
        starts.append(span["start_ms"])
        widths.append(max(span["duration_ms"], 1.0))
        colours.append(TYPE_COLOURS.get(span["type"], "#6b7280"))
        lines.append(2 if span["render_blocking"] == "blocking" else 0)
        blocking = " · render-blocking" if span["render_blocking"] == "blocking" else ""
        texts.append(
            f"{span['type']} {span['description'][:120]}<br>{span['start_ms']:.0f} ms + {span['duration_ms']:.0f} ms{blocking}"
        )
    figure = go.Figure(
        go.Bar(
            y=labels,
            x=widths,
            base=starts,
            orientation="h",
            marker={"color": colours, "line": {"color": "#b42318", "width": lines}},
            hovertext=texts,
            hoverinfo="text",
        )
    )
    shapes, annotations = [], []
    for marker in data["markers"]:
        shapes.append(
            {
                "type": "line",
                "x0": marker["at_ms"],
                "x1": marker["at_ms"],
                "yref": "paper",
                "y0": 0,
                "y1": 1,
                "line": {"color": "#111827", "dash": "dash", "width": 1},
            }
        )
        annotations.append(
            {
                "x": marker["at_ms"],
                "yref": "paper",
                "y": 1.0,
                "text": f"{marker['name']} {marker['at_ms']:.0f} ms",
                "showarrow": False,
                "yanchor": "bottom",
                "font": {"size": 11},
            }
        )
    height = max(220, 22 * len(labels) + 80)
    return _layout(
        figure,
        "Waterfall (ms from navigation start)",
        "",
        height=height,
        xaxis={"title": {"text": "ms"}, "rangemode": "tozero"},
        shapes=shapes,
        annotations=annotations,
        bargap=0.25,
        yaxis={"autorange": "reversed", "automargin": True, "tickfont": {"size": 10}},
    )
