"""A widget's figure: a line is Explore's figure of its first aggregate (a gap stays a gap), bars over time
drop the gap's point instead of drawing a zero, bars per group name each group, the height follows the
widget's rows, and numbers and tables have no figure."""

from __future__ import annotations

from dashboards.dashboard_figures import figure_height, widget_figure
from stacklens.explore.columns import columns_of
from stacklens.explore.query_parser import parse_query
from stacklens.explore.run import Result
from stacklens.explore.widgets import WidgetAnswer

WINDOW = {"since": "2026-11-01T00:00:00Z", "until": "2026-11-05T00:00:00Z"}
SERIES = [
    {
        "group": {},
        "t": ["2026-11-01T00:00:00Z", "2026-11-02T00:00:00Z", "2026-11-04T00:00:00Z"],
        "samples": [3, 4, 5],
        "values": {"count": [3, 4, 5]},
        "counts": {},
    }
]


def _answer(kind: str, body: dict, result: Result) -> WidgetAnswer:
    query = parse_query({**body, **WINDOW})
    return WidgetAnswer(0, {"kind": kind, "title": "x"}, query, result)


def test_lines_bars_and_heights() -> None:
    body = {"dataset": "pageloads", "interval": "1d"}
    result = Result(["count", "samples"], [{"count": 12, "samples": 12}], SERIES)
    line = _answer("line", body, result)
    figure = widget_figure(line, columns_of(line.query), 2)
    assert figure is not None and figure["layout"]["height"] == figure_height(2) == 250
    assert figure["data"][0]["y"] == [3, 4, None, 5]  # the missing day breaks the line
    assert figure["layout"]["title"]["text"] == "12 samples"
    bars = widget_figure(_answer("bar", body, result), columns_of(line.query), 3)
    assert bars is not None and bars["data"][0]["type"] == "bar" and bars["data"][0]["y"] == [3, 4, 5]
    assert bars["layout"]["height"] == 400
    grouped = {"dataset": "pageloads", "group_by": ["browser"]}
    rows = [{"browser": "Chrome", "count": 7, "samples": 7}, {"browser": "Safari", "count": 2, "samples": 2}]
    per_group = _answer("bar", grouped, Result(["browser", "count", "samples"], rows))
    drawn = widget_figure(per_group, columns_of(per_group.query), 2)
    assert (
        drawn is not None
        and drawn["data"][0]["x"] == ["Chrome", "Safari"]
        and drawn["data"][0]["y"] == [7, 2]
    )
    assert drawn["data"][0]["customdata"] == ["7", "2"]
    for kind in ("number", "table"):
        assert widget_figure(_answer(kind, body, result), columns_of(line.query), 1) is None
