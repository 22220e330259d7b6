"""Release and annotation markers drawn on a Plotly time chart: a thin vertical line at each marker group
(:func:`stacklens.markers.grouped`: at most a dozen on a chart) with a small label above the plot, its
hover listing what it marks. A single release's label links to its release page. Event data (versions,
annotation texts) is escaped: Plotly reads labels as a small HTML subset."""

from __future__ import annotations

import html
from collections.abc import Iterable
from datetime import datetime
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
    """The label above the plot: a release's version without its package (``shop@1.4.0`` → ``1.4.0``), cut at
    :data:`MAX_LABEL` characters; the hover has the whole text."""
    label = group.label
    if len(group.members) == 1 and group.kind == RELEASE and "@" in label:
        label = label.rsplit("@", 1)[1] or label
    return label if len(label) <= MAX_LABEL else label[: MAX_LABEL - 1] + "…"


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
        label = short_label(group)
        text = html.escape(label)
        only = group.members[0]
        if links and len(group.members) == 1 and only.kind == RELEASE and only.project:
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
                # Neighbouring labels on two rows, so two markers close together on a small chart do not
                # overlap.
                "yshift": 12 if index % 2 else 0,
                "captureevents": True,
            }
        )
    layout["shapes"] = shapes
    layout["annotations"] = notes
    margin = layout.setdefault("margin", {})
    rows = 2 if len(groups) > 1 else 1
    margin["t"] = max(int(margin.get("t", 0) or 0) + 12 * rows + 2, 30)  # room for the labels above the plot
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
