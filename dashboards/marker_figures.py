"""Release and annotation markers drawn on a Plotly time chart: a thin vertical line at each marker group
(:func:`stacklens.markers.grouped`: at most a dozen on a chart) with a small label above the plot, its
hover listing what it marks. A single release's label links to its release page. Event data (versions,
annotation texts) is escaped: Plotly reads labels as a small HTML subset."""

from __future__ import annotations

import html
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

from clickhouse_connect.driver.client import Client
from sqlalchemy.orm import Session

from dashboards.uptime_overlay import add_uptime
from stacklens.markers import RELEASE, MarkerGroup, chart_markers
from stacklens.monitors.uptime_reads import uptime_buckets

COLOURS = {RELEASE: "#6b7280", "annotation": "#7c3aed", "mixed": "#7c3aed"}
MAX_LABEL = 18  # characters of a label above the plot; the hover has the whole text


def _iso(group: MarkerGroup) -> str:
    return group.time.isoformat().replace("+00:00", "Z")


def short_label(group: MarkerGroup) -> str:
    """The label above the plot: the group's named release without its package (``shop@1.4.0`` → ``1.4.0``)
    or annotation, cut at :data:`MAX_LABEL` characters, then how many more it holds (``1.4.0 +2``); the hover
    has every member's whole text."""
    name = group.name
    if group.named.kind == RELEASE and "@" in name:
        name = name.rsplit("@", 1)[1] or name
    name = name if len(name) <= MAX_LABEL else name[: MAX_LABEL - 1] + "…"
    return f"{name} +{group.more}" if group.more else name


# Label placement: a label's width in characters at font size 10 (~6 px each) against a chart of about 900 px
# (the pages' half-width charts are ~450 px: the rows below are chosen for those, the narrower case).
CHAR_PX = 6.0
CHART_PX = 450.0
ROWS = 3
ROW_PX = 12


def label_rows(positions: list[float], widths: list[int]) -> list[int]:
    """A row (0 = lowest) for each label, left to right: the lowest row where it does not overlap the last
    label placed there; ``positions`` are the labels' centres as shares of the chart's width and ``widths``
    their lengths in characters. Beyond :data:`ROWS` rows, the row whose last label ends first."""
    ends = [-1.0] * ROWS
    rows = []
    for at, chars in zip(positions, widths, strict=True):
        half = chars * CHAR_PX / CHART_PX / 2 + 0.01
        free = [r for r in range(ROWS) if ends[r] <= at - half]
        row = free[0] if free else min(range(ROWS), key=lambda r: ends[r])
        ends[row] = at + half
        rows.append(row)
    return rows


def _positions(figure: dict[str, Any], groups: list[MarkerGroup]) -> list[float]:
    """Each group's place across the chart (0 to 1): from the x axis's range when set, else from the traces'
    dates and the groups' own times."""
    times = [g.time.timestamp() for g in groups]
    xaxis = (figure.get("layout") or {}).get("xaxis") or {}
    span = [_seconds(v) for v in (xaxis.get("range") or [])]
    if len(span) != 2 or None in span:
        xs = [_seconds(x) for trace in figure.get("data") or [] for x in (trace.get("x") or [])]
        known = [x for x in xs if x is not None] + times
        span = [min(known), max(known)]
    low, high = float(span[0] or 0), float(span[1] or 0)
    return [0.5 if high <= low else (t - low) / (high - low) for t in times]


def _seconds(value: Any) -> float | None:
    try:
        text = str(value).replace("Z", "+00:00")
        moment = datetime.fromisoformat(text if "T" in text or "+" in text else text + "T00:00:00+00:00")
        return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()
    except ValueError:
        return None


def release_link(org_slug: str, project: str, version: str) -> str:
    return f"/orgs/{quote(org_slug)}/projects/{quote(project)}/releases/{quote(version, safe='')}"


def add_markers(
    figure: dict[str, Any], groups: list[MarkerGroup], org_slug: str, *, links: bool = True
) -> dict[str, Any]:
    """``figure`` (a Plotly figure as JSON) with the marker groups drawn on it; returned for chaining. Without
    ``links`` (a shared page, read signed out) a release's label is plain text."""
    if not groups:
        return figure
    layout = figure.setdefault("layout", {})
    shapes = list(layout.get("shapes") or [])
    notes = list(layout.get("annotations") or [])
    labels = [short_label(group) for group in groups]
    rows = label_rows(_positions(figure, groups), [len(label) for label in labels])
    for index, group in enumerate(groups):
        colour = COLOURS.get(group.kind, "#6b7280")
        x = _iso(group)
        shapes.append(
            {
                "type": "line",
                "xref": "x",
                "yref": "paper",
                "x0": x,
                "x1": x,
                "y0": 0,
                "y1": 1,
                "line": {"color": colour, "width": 1, "dash": "dot"},
                "layer": "below",
            }
        )
        text = html.escape(labels[index])
        only = group.named  # a group's label links to the release it names
        if links and only.kind == RELEASE and only.project:
            text = f'<a href="{html.escape(release_link(org_slug, only.project, only.release))}">{text}</a>'
        notes.append(
            {
                "x": x,
                "xref": "x",
                "y": 1,
                "yref": "paper",
                "yanchor": "bottom",
                # Plotly anchors a label by where its line falls: left in the chart's first third, centred in
                # the middle one, right in the last — a marker at the chart's right edge (today's deploy)
                # keeps its label inside the chart instead of cut off at the border.
                "xanchor": "auto",
                "showarrow": False,
                "text": text,
                "hovertext": "<br>".join(html.escape(d) for d in group.details),
                "font": {"size": 10, "color": colour},
                # Labels that would overlap go on rows above each other (issue 71: neighbours overlapped).
                "yshift": ROW_PX * rows[index],
                "captureevents": True,
            }
        )
    layout["shapes"] = shapes
    layout["annotations"] = notes
    margin = layout.setdefault("margin", {})
    used = max(rows) + 1
    margin["t"] = max(
        int(margin.get("t", 0) or 0) + ROW_PX * used + 2, 30
    )  # room for the labels above the plot
    return figure


def is_time_chart(figure: Any) -> bool:
    """A Plotly figure (as JSON) drawn over a date axis: the charts markers go on."""
    return isinstance(figure, dict) and figure.get("layout", {}).get("xaxis", {}).get("type") == "date"


def mark_time_charts(
    figures: Iterable[Any], groups: list[MarkerGroup], org_slug: str, *, links: bool = True
) -> None:
    """The marker groups drawn on every time chart among ``figures`` (other figures and ``None`` left
    alone): the one way a page puts its releases and annotations on its charts."""
    for figure in figures:
        if is_time_chart(figure):
            add_markers(figure, groups, org_slug, links=links)


def mark_charts(
    figures: Iterable[Any],
    client: Client,
    session: Session,
    org_id: int,
    org_slug: str,
    project_ids: list[int],
    since: datetime,
    until: datetime,
    environment: str = "",
) -> None:
    """The releases of ``project_ids`` first seen in [since, until) and their annotations on every time
    chart among ``figures``, read once for the page (:func:`stacklens.markers.chart_markers`), and beside
    them the projects' uptime when they have uptime checks (:mod:`dashboards.uptime_overlay`); no read
    without a time chart."""
    shown = [f for f in figures if is_time_chart(f)]
    if shown and since < until:
        groups = chart_markers(client, session, org_id, project_ids, since, until, environment)
        mark_time_charts(shown, groups, org_slug)
        buckets = uptime_buckets(client, org_id, project_ids, since, until)
        for figure in shown:
            add_uptime(figure, buckets)
