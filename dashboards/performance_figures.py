"""Plotly figures of the performance pages. Python builds each figure; the page hands its JSON to plotly.js
(no inline script). Points from fewer than MIN_SAMPLES samples are drawn grey, never dropped."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date, timedelta
from typing import Any
from urllib.parse import urlsplit

import plotly.graph_objects as go

from dashboards.figure_json import figure_json
from stacklens.metrics import units
from stacklens.metrics.units import log_ticks
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
GREY_TEXT = "#98a2b3"
# What an empty chart says, as the budget and alert charts say it (dashboards.budget_figures).
NO_DATA = "no data for these filters"


def _layout(
    figure: go.Figure,
    title: str,
    y_title: str,
    height: int = 240,
    yaxis: dict[str, Any] | None = None,
    showlegend: bool = False,
    margin: dict[str, int] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    figure.update_layout(
        margin=margin or {"l": 56, "r": 10, "t": 34, "b": 40},
        title={"text": title, "font": {"size": 13}, "x": 0, "xanchor": "left"},
        height=height,
        yaxis=yaxis or {"title": {"text": y_title}, "rangemode": "tozero"},
        plot_bgcolor="#fff",
        showlegend=showlegend,
        **extra,
    )
    return figure_json(figure)


def _colours(counts: list[int]) -> list[str]:
    return [ACCENT if n >= MIN_SAMPLES else GREY for n in counts]


def series_figure(
    rows: Sequence[Mapping[str, Any]],
    x: str,
    y: str,
    n: str,
    title: str,
    unit: str,
    slots: list[str] | None = None,
    previous: Sequence[Mapping[str, Any]] | None = None,
    previous_slots: list[str] | None = None,
) -> dict[str, Any]:
    """A line over time (days or weeks) of ``y`` with its sample count in the hover; thin points grey.

    With ``previous`` (the rows of the period just before, over its ``previous_slots``) a dotted grey line
    draws that period under this one, slot by slot (its first day under this window's first day), its own
    dates in the hover, so a change reads at a glance; its gaps stay gaps.

    ``slots`` are every x of the window (``stacklens.performance.calendar``: ``day_slots``, ``week_slots``): a
    slot without a row, or a row without a value, is ``None`` — plotly draws no point there and does not
    join the line across it (``connectgaps`` off), so a day without samples never reads as 0 or as a
    straight line over the hole. A chart with no value at all says "no data for these filters" over the
    window's own axis (an empty trace would make plotly invent an axis around January 2000)."""
    by_x = {str(r[x]): r for r in rows}
    xs = slots if slots is not None else [str(r[x]) for r in rows if r.get(y) is not None]
    values = [by_x[k].get(y) if k in by_x else None for k in xs]
    counts = [int(by_x[k].get(n) or 0) if k in by_x else 0 for k in xs]
    comparing = previous is not None and previous_slots is not None
    figure = go.Figure(
        go.Scatter(
            x=xs,
            y=values,
            name="this period",
            mode="lines+markers",
            connectgaps=False,
            line={"color": ACCENT, "width": 1.5},
            marker={"color": _colours(counts), "size": 7},
            customdata=counts,
            hovertemplate="%{x}<br>%{y:,.4~r} " + unit + "<br>%{customdata} samples<extra></extra>",
        )
    )
    if comparing:
        _previous_trace(figure, xs, x, y, unit, previous or [], previous_slots or [])
    shown = [k for k, v in zip(xs, values, strict=True) if v is not None]
    empty = not shown
    if empty:
        _no_data(figure)
    yaxis: dict[str, Any] = {"title": {"text": unit}, "rangemode": "tozero"}
    if empty:  # an axis of nothing: no invented 0 to 1 scale
        yaxis.update(range=[0, 1], showticklabels=False)
    # Comparing: the two lines named at the top right, above where release markers put their labels.
    legend: dict[str, Any] = (
        {
            "showlegend": True,
            "legend": {"orientation": "h", "x": 1, "xanchor": "right", "y": 1.12, "yanchor": "bottom"},
            "margin": {"l": 56, "r": 10, "t": 60, "b": 40},
        }
        if comparing
        else {}
    )
    if x == "iso_week":
        return _layout(figure, title, unit, xaxis=category_axis(xs), yaxis=yaxis, **legend)
    return _layout(
        figure,
        title,
        unit,
        xaxis=_day_axis(xs if slots is not None else shown, slots is not None),
        yaxis=yaxis,
        **legend,
    )


def _previous_trace(
    figure: go.Figure,
    xs: list[str],
    x: str,
    y: str,
    unit: str,
    rows: Sequence[Mapping[str, Any]],
    slots: list[str],
) -> None:
    by_x = {str(r[x]): r for r in rows}
    # Slot i of the previous period under slot i of this one; a window of another length leaves the rest
    # empty.
    labels = [slots[i] if i < len(slots) else "" for i in range(len(xs))]
    values = [by_x[k].get(y) if k in by_x else None for k in labels]
    figure.add_trace(
        go.Scatter(
            x=xs,
            y=values,
            name="previous period",
            mode="lines",
            connectgaps=False,
            line={"color": GREY_TEXT, "width": 1.5, "dash": "dot"},
            customdata=labels,
            hovertemplate="%{customdata} (previous period)<br>%{y:,.4~r} " + unit + "<extra></extra>",
        )
    )


def _no_data(figure: go.Figure) -> None:
    figure.add_annotation(
        text=NO_DATA,
        xref="paper",
        yref="paper",
        x=0.5,
        y=0.5,
        showarrow=False,
        font={"color": GREY_TEXT, "size": 13},
    )


def _day_axis(days: list[str], whole_window: bool = False) -> dict[str, Any]:
    """A date axis of daily points over ``days``. With one day alone plotly would zoom to milliseconds
    around it (ticks like 23:59:59.999): a day either side keeps the ticks on days. With ``whole_window``
    (``days`` are every day of the window) the axis spans exactly them, so a run of empty days at either
    end still shows as empty days. With no day at all the axis is hidden rather than dated January 2000."""
    axis: dict[str, Any] = {"type": "date"}
    distinct = sorted(set(days))
    if not distinct:
        return {"visible": False}
    first, last = date.fromisoformat(distinct[0][:10]), date.fromisoformat(distinct[-1][:10])
    if first == last:
        axis.update(
            range=[(first - timedelta(days=1)).isoformat(), (last + timedelta(days=1)).isoformat()],
            dtick=86_400_000,
            tickformat="%b %d, %Y",
        )
    elif whole_window:
        axis["range"] = [f"{first - timedelta(days=1)} 12:00", f"{last} 12:00"]
    return axis


def bars_figure(
    labels: list[str],
    values: list[float | None],
    counts: list[int],
    title: str,
    unit: str,
    colours: list[str] | None = None,
) -> dict[str, Any]:
    # A label without a value (no samples) keeps its place with no bar: never a bar of 0.
    figure = go.Figure(
        go.Bar(
            x=labels,
            y=values,
            marker_color=colours or _colours(counts),
            customdata=counts,
            hovertemplate="%{x}<br>%{y:.4~r} " + unit + "<br>%{customdata} samples<extra></extra>",
        )
    )
    return _layout(figure, title, unit, xaxis=category_axis(labels))


def category_axis(labels: Sequence[str]) -> dict[str, Any]:
    """A category axis over ``labels`` with the range a bar chart takes (half a slot beyond each end): a
    line and a bar chart of the same slots side by side then put each week at the same place (plotly's own
    ranges differ, a line's ending at its outer points)."""
    return {
        "type": "category",
        "categoryorder": "array",
        "categoryarray": list(labels),
        "range": [-0.5, len(labels) - 0.5],
    }


def distribution_figure(buckets: Sequence[Mapping[str, Any]], title: str, unit: str) -> dict[str, Any]:
    """Page loads per bucket of one metric (log-scale buckets for times, ticked at round times)."""
    figure = go.Figure(
        go.Bar(
            x=[(b["from"] * b["to"]) ** 0.5 if unit == "ms" else (b["from"] + b["to"]) / 2 for b in buckets],
            y=[b["loads"] for b in buckets],
            width=[b["to"] - b["from"] for b in buckets],
            marker_color=ACCENT,
            customdata=[[b["from"], b["to"]] for b in buckets],
            hovertemplate="%{customdata[0]:,.4~r} to %{customdata[1]:,.4~r} "
            + unit
            + "<br>%{y} page loads<extra></extra>",
        )
    )
    xaxis: dict[str, Any] = {"title": {"text": unit}}
    if unit == "ms":
        ticks = log_ticks(min(b["from"] for b in buckets), max(b["to"] for b in buckets)) if buckets else []
        xaxis.update(
            type="log",
            tickmode="array",
            tickvals=ticks,
            ticktext=[units.axis_tick(units.MS, t) for t in ticks],
        )
    return _layout(figure, title, "page loads", xaxis=xaxis)


def types_figure(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Bytes per resource type (encoded body), coloured by type."""
    return bars_figure(
        [r["resource_type"] for r in rows],
        [None if r["total_bytes"] is None else r["total_bytes"] / 1024 / 1024 for r in rows],
        [r["requests"] for r in rows],
        "Bytes per resource type (MiB, encoded)",
        "MiB",
        [TYPE_COLOURS.get(r["resource_type"], "#6b7280") for r in rows],
    )


def releases_figure(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
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
    # A release without JavaScript measured is a gap in the line, not 0 KiB.
    kib = [None if r["js_bytes_per_view"] is None else r["js_bytes_per_view"] / 1024 for r in rows]
    # Ticked on round values of one binary unit (0, 200, 400 KiB), not plotly's thirds of the range.
    tickvals, ticktext = units.size_ticks(max([k for k in kib if k is not None], default=0.0))
    figure.add_scatter(
        x=names,
        y=kib,
        connectgaps=False,
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
            "title": {"text": "JavaScript / view"},
            "overlaying": "y",
            "side": "right",
            "tickmode": "array",
            "tickvals": tickvals,
            "ticktext": ticktext,
            "range": [0, tickvals[-1] or 1],
            "showgrid": False,
        },
    )


def span_label(description: str, op: str, limit: int = 40) -> str:
    """A waterfall row's name: a file by its name (``app.js``), an API call by its method and path
    (``GET /api/products/0``: the last path segment alone, often an id, says nothing), the span's op when
    it has no description; a long name keeps its end."""
    method, _, rest = description.strip().partition(" ")
    if not (rest and method.isalpha() and method.isupper()):
        method, rest = "", description.strip()
    path = urlsplit(rest).path if "://" in rest else rest.split("?", 1)[0]
    name = f"{method} {path or '/'}" if method else path.rstrip("/").rsplit("/", 1)[-1] or path or op
    return name if len(name) <= limit else "…" + name[-(limit - 1) :]


def waterfall_figure(data: Mapping[str, Any]) -> dict[str, Any]:
    """Phases then spans as horizontal bars from their offset; blocking resources outlined red; FCP/LCP
    lines."""
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
