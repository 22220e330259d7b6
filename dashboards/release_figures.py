"""Plotly figures of the release page: one release's figures per hour or day since it was first seen. Python
builds each figure; the page hands its JSON to plotly.js (no inline script).

Every bucket of the span is on the x axis; a bucket without samples of a figure is ``None`` there — plotly
draws no point and does not join the line across it (``connectgaps`` off), so an hour without sessions is a
gap, never 0 % or 0 sessions. A chart with no value at all says so instead of drawing an empty axis."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import plotly.graph_objects as go

from dashboards.figure_json import figure_json
from stacklens.metrics.formatting import axis_title
from stacklens.releases.sessions import Bucket

ACCENT = "#0b5cad"
SECOND = "#c2410c"
GREY_TEXT = "#98a2b3"
NO_DATA = "no data for this release in this span"


def slots(since: datetime, until: datetime, size: timedelta) -> list[datetime]:
    """Every bucket start from the one holding ``since`` to the one holding the end of [since, until)."""
    epoch = datetime(1970, 1, 1, tzinfo=since.tzinfo)
    first = epoch + size * ((since - epoch) // size)
    out = []
    moment = first
    while moment < until:
        out.append(moment)
        moment += size
    return out


def _line(
    xs: list[str], values: list[float | None], counts: list[int], name: str, unit: str, colour: str
) -> go.Scatter:
    return go.Scatter(
        x=xs,
        y=values,
        name=name,
        mode="lines+markers",
        connectgaps=False,
        line={"color": colour, "width": 1.5},
        marker={"color": colour, "size": 6},
        customdata=counts,
        hovertemplate="%{x}<br>%{y:,.4~r} " + unit + "<br>%{customdata} samples<extra>" + name + "</extra>",
    )


def _finish(
    figure: go.Figure, title: str, y_title: str, empty: bool, yaxis: dict[str, Any]
) -> dict[str, Any]:
    if empty:
        figure.add_annotation(
            text=NO_DATA, xref="paper", yref="paper", x=0.5, y=0.5, showarrow=False, font={"color": GREY_TEXT}
        )
        yaxis = {**yaxis, "range": [0, 1], "showticklabels": False}
    figure.update_layout(
        title={"text": title, "font": {"size": 13}, "x": 0, "xanchor": "left"},
        height=240,
        # The legend goes under the axis: above the plot are the release and annotation markers' labels.
        margin={"l": 60, "r": 10, "t": 34, "b": 40 if len(figure.data) < 2 else 64},
        yaxis={"title": {"text": y_title}, **yaxis},
        xaxis={"type": "date"},
        plot_bgcolor="#fff",
        showlegend=len(figure.data) > 1,
        legend={"orientation": "h", "y": -0.22, "x": 1, "xanchor": "right", "yanchor": "top"},
    )
    return figure_json(figure)


def release_figures(
    buckets: list[Bucket], since: datetime, until: datetime, size: timedelta
) -> dict[str, dict[str, Any]]:
    """The release page's charts: crash-free sessions and users, sessions, errors per 1,000 page loads and
    load time p75, per bucket of ``size`` over [since, until)."""
    per = "hour" if size <= timedelta(hours=1) else "day"
    by_start = {b.start: b for b in buckets}
    xs_time = slots(since, until, size)
    xs = [x.isoformat() for x in xs_time]
    got = [by_start.get(x) for x in xs_time]

    def values(read: Any) -> list[Any]:
        return [None if b is None else read(b) for b in got]

    def counts(read: Any) -> list[int]:
        return [0 if b is None else int(read(b)) for b in got]

    crash_free = go.Figure(
        [
            _line(
                xs,
                values(lambda b: b.crash_free_sessions),
                counts(lambda b: b.sessions),
                "sessions",
                "%",
                ACCENT,
            ),
            _line(xs, values(lambda b: b.crash_free_users), counts(lambda b: b.users), "users", "%", SECOND),
        ]
    )
    session_values = values(lambda b: b.sessions or None)
    sessions = go.Figure(
        go.Bar(
            x=xs,
            y=session_values,
            marker_color=ACCENT,
            hovertemplate="%{x}<br>%{y:,} sessions<extra></extra>",
        )
    )
    errors = go.Figure(
        _line(
            xs,
            values(lambda b: b.errors_per_1k_page_loads),
            counts(lambda b: b.page_loads),
            "errors per 1,000 page loads",
            "per 1,000",
            SECOND,
        )
    )
    load = go.Figure(
        _line(xs, values(lambda b: b.load_p75), counts(lambda b: b.page_loads), "load time p75", "ms", ACCENT)
    )

    def empty(series: list[Any]) -> bool:
        return all(v is None for v in series)

    crash_values = values(lambda b: b.crash_free_sessions) + values(lambda b: b.crash_free_users)
    return {
        "crash-free": _finish(
            crash_free,
            f"Crash-free sessions and users per {per}",
            axis_title("crash_free_sessions").replace("Crash-free sessions", "Crash-free"),
            empty(crash_values),
            {},
        ),
        "sessions": _finish(
            sessions, f"Sessions per {per}", "sessions", empty(session_values), {"rangemode": "tozero"}
        ),
        "errors": _finish(
            errors,
            f"Errors per 1,000 page loads per {per}",
            axis_title("error_events", "rate_per_1k"),
            empty(values(lambda b: b.errors_per_1k_page_loads)),
            {"rangemode": "tozero"},
        ),
        "load": _finish(
            load,
            f"Load time p75 per {per}",
            axis_title("load_time_ms"),
            empty(values(lambda b: b.load_p75)),
            {"rangemode": "tozero"},
        ),
    }
