"""Uptime beside the release markers: the project's uptime checks' uptime % drawn on its time charts as a
thin line against a right-hand axis, per hour (per day past 3 days) — so a dip in uptime sits beside the
release that caused it. Only charts of a window with probes get it; a bucket without a probe is a gap, never
0 %. The values are the catalog's ``uptime_pct`` (:func:`stacklens.monitors.uptime_reads.uptime_buckets`)."""

from __future__ import annotations

from typing import Any

from stacklens.metrics.formatting import format_value
from stacklens.monitors.uptime_reads import UptimeBucket

COLOUR = "#0e7490"
NAME = "Uptime (%)"


def add_uptime(figure: dict[str, Any], buckets: list[UptimeBucket]) -> dict[str, Any]:
    """``figure`` (a Plotly time chart as JSON) with the uptime line on a right-hand axis; left alone
    without buckets, when the chart already uses a second axis, or when it is uptime itself (layout
    ``meta.uptime`` false: an uptime budget's chart)."""
    layout = figure.setdefault("layout", {})
    if not buckets or "yaxis2" in layout or (layout.get("meta") or {}).get("uptime") is False:
        return figure
    low = min(b.uptime_pct for b in buckets)
    data = list(figure.get("data") or [])
    data.append(
        {
            "type": "scatter",
            "mode": "lines+markers",
            "name": NAME,
            "x": [b.start.isoformat().replace("+00:00", "Z") for b in buckets],
            "y": [round(b.uptime_pct, 3) for b in buckets],
            "yaxis": "y2",
            "line": {"color": COLOUR, "width": 1, "dash": "dot"},
            "marker": {"size": 4, "color": COLOUR, "symbol": "diamond"},
            "connectgaps": False,
            "customdata": [[format_value("uptime_pct", b.uptime_pct), b.probes] for b in buckets],
            "hovertemplate": "%{x|%Y-%m-%d %H:%M} UTC<br>uptime %{customdata[0]} of %{customdata[1]} probes"
            "<extra></extra>",
            "showlegend": False,  # the right-hand axis names it
        }
    )
    figure["data"] = data
    # From a little under the lowest bucket to 100 %: 99.9 % and 100 % must not be one stroke.
    floor = max(0.0, min(low - max((100.0 - low) * 0.5, 0.05), 99.9))
    ticks = sorted({round(low, 1), 100.0})
    layout["yaxis2"] = {
        "title": {"text": "Uptime", "font": {"color": COLOUR, "size": 10}, "standoff": 2},
        "overlaying": "y",
        "side": "right",
        "range": [floor, 100.0 + (100.0 - floor) * 0.08],
        "showgrid": False,
        "zeroline": False,
        # Two ticks, the lowest bucket and 100 %, written as the catalog writes uptime.
        "tickmode": "array",
        "tickvals": ticks,
        "ticktext": [format_value("uptime_pct", t).replace(".000 %", " %") for t in ticks],
        "tickfont": {"color": COLOUR, "size": 9},
    }
    margin = layout.setdefault("margin", {})
    margin["r"] = max(int(margin.get("r", 0) or 0), 58)  # room for the right-hand axis and its title
    return figure
