"""Markers on a figure: a dotted line and a label per group (neighbours on two rows, a release's without
its package), a lone release's label linking to its release page, every version and text escaped (Plotly
reads labels as HTML), long labels cut with the whole text on hover, and room made above the plot."""

from __future__ import annotations

from datetime import UTC, datetime

from dashboards.marker_figures import add_markers, release_link
from stacklens.markers import ANNOTATION, RELEASE, Marker, MarkerGroup

AT = datetime(2026, 11, 10, 8, 30, tzinfo=UTC)


def test_lines_labels_links_and_escaping() -> None:
    release = MarkerGroup([Marker(AT, RELEASE, "shop@<b>v1</b>", "web", "shop@<b>v1</b>")])
    note = MarkerGroup(
        [Marker(AT, ANNOTATION, "a very long deploy note text", "", "", ("deploy-of-the-big-api",))]
    )
    figure = add_markers({"data": [], "layout": {"margin": {"t": 24}}}, [release, note], "acme")
    shapes, labels = figure["layout"]["shapes"], figure["layout"]["annotations"]
    assert [s["x0"] for s in shapes] == ["2026-11-10T08:30:00Z"] * 2 and shapes[0]["line"]["dash"] == "dot"
    assert (
        labels[0]["text"]
        == '<a href="/orgs/acme/projects/web/releases/shop%40%3Cb%3Ev1%3C%2Fb%3E">&lt;b&gt;v1&lt;/b&gt;</a>'
    )
    assert labels[0]["hovertext"] == "shop@&lt;b&gt;v1&lt;/b&gt; first seen 2026-11-10 08:30 UTC (web)"
    assert (
        labels[1]["text"] == "deploy-of-the-big…"
        and "a very long deploy note text [deploy-of-the-big-api]" in labels[1]["hovertext"]
    )
    assert figure["layout"]["margin"]["t"] == 24 + 26  # two rows of labels
    assert [label["yshift"] for label in labels] == [0, 12]
    assert add_markers({"layout": {}}, [], "acme") == {"layout": {}}
    assert release_link("acme", "web", "shop@1.4.0/b") == "/orgs/acme/projects/web/releases/shop%401.4.0%2Fb"


def test_groups_are_named_and_labels_kept_apart() -> None:
    """Issue 71: a release and its deploy note read "2 markers" on every chart and labels overlapped."""
    deploy = MarkerGroup(
        [
            Marker(AT, RELEASE, "shop@1.4.0", "web", "shop@1.4.0"),
            Marker(AT, ANNOTATION, "deployed 1.4.0", "", "shop@1.4.0", ("deploy",)),
        ]
    )
    later = [
        MarkerGroup([Marker(AT.replace(hour=h), RELEASE, f"shop@1.{h}.0", "web", f"shop@1.{h}.0")])
        for h in (9, 10, 20)
    ]
    data = [{"x": ["2026-11-10T00:00:00Z", "2026-11-11T00:00:00Z"], "y": [1, 2]}]
    figure = add_markers({"data": data, "layout": {}}, [deploy, *later], "acme")
    labels = figure["layout"]["annotations"]
    assert [label["text"].split(">")[1].split("<")[0] for label in labels[:1]] == ["1.4.0 +1"]
    assert "/releases/shop%401.4.0" in labels[0]["text"]  # the named release's page
    assert "deployed 1.4.0 [deploy]" in labels[0]["hovertext"]
    # 08:30, 09:00 and 10:00 of a day-wide chart overlap: three rows; 20:00 is clear, back on the lowest.
    assert [label["yshift"] for label in labels] == [0, 12, 24, 0]
    assert figure["layout"]["margin"]["t"] == 12 * 3 + 2
