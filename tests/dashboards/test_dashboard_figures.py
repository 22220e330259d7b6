"""A widget's figure draws what the widget says (issue 70): a line per aggregate and group over the whole
window (a gap stays a gap, a bucket before the data a gap too), two units on two y axes, more than two refused
with the reason, bars over time and per group, the height following the widget's rows; numbers and tables have
no figure."""

from __future__ import annotations

from dashboards.dashboard_figures import figure_height, widget_figure
from stacklens.explore.answer import SeriesLine
from stacklens.explore.columns import columns_of
from stacklens.explore.query_parser import parse_query
from stacklens.explore.run import Result
from stacklens.explore.widget_plot import widget_plot
from stacklens.explore.widgets import WidgetAnswer

WINDOW = {"since": "2026-11-01T00:00:00Z", "until": "2026-11-06T00:00:00Z"}
SERIES: list[SeriesLine] = [
    {
        "group": {},
        "t": ["2026-11-02T00:00:00Z", "2026-11-03T00:00:00Z", "2026-11-05T00:00:00Z"],
        "samples": [3, 4, 5],
        "values": {"count": [3, 4, 5], "lcp_p75_ms": [2100.0, 2200.0, 2300.0], "cls_p75": [0.1, 0.2, 0.1]},
        "counts": {},
    }
]


def _answer(kind: str, body: dict, result: Result) -> WidgetAnswer:
    query = parse_query({**body, **WINDOW})
    return WidgetAnswer(0, {"kind": kind, "title": "x"}, query, result)


def _figure(answer: WidgetAnswer, rows: int = 2):
    assert answer.query is not None
    return widget_figure(answer, columns_of(answer.query), rows, widget_plot(answer))


def test_lines_span_the_window_and_bars_and_heights() -> None:
    body = {"dataset": "pageloads", "interval": "1d"}
    result = Result(["count", "samples"], [{"count": 12, "samples": 12}], SERIES)
    figure = _figure(_answer("line", body, result))
    assert figure is not None and figure["layout"]["height"] == figure_height(2) == 250
    # Five days of the window, the first (before the data) and the fourth (missing) gaps, never 0.
    assert figure["data"][0]["x"][0] == "2026-11-01T00:00:00Z" and len(figure["data"][0]["x"]) == 5
    assert figure["data"][0]["y"] == [None, 3, 4, None, 5]
    assert figure["layout"]["title"]["text"] == "12 samples"
    bars = _figure(_answer("bar", body, result), 3)
    assert (
        bars is not None
        and bars["data"][0]["type"] == "bar"
        and bars["data"][0]["y"] == [None, 3, 4, None, 5]
    )
    assert bars["layout"]["height"] == 400
    grouped = {"dataset": "pageloads", "group_by": ["browser"]}
    rows = [{"browser": "Chrome", "count": 7, "samples": 7}, {"browser": "Safari", "count": 2, "samples": 2}]
    drawn = _figure(_answer("bar", grouped, Result(["browser", "count", "samples"], rows)))
    assert (
        drawn is not None
        and drawn["data"][0]["x"] == ["Chrome", "Safari"]
        and drawn["data"][0]["y"] == [7, 2]
    )
    assert drawn["data"][0]["customdata"] == ["7", "2"]
    for kind in ("number", "table"):
        assert _figure(_answer(kind, body, result), 1) is None


def test_every_aggregate_is_drawn_two_units_on_two_axes() -> None:
    body = {
        "dataset": "pageloads",
        "interval": "1d",
        "aggregates": [{"fn": "p75", "metric": "lcp_ms"}, {"fn": "count"}],
    }
    result = Result(
        ["lcp_p75_ms", "count", "samples"], [{"lcp_p75_ms": 2200.0, "count": 12, "samples": 12}], SERIES
    )
    figure = _figure(_answer("line", body, result))
    assert figure is not None
    assert [t["name"] for t in figure["data"]] == ["LCP p75 (ms)", "Count"]
    assert [t["yaxis"] for t in figure["data"]] == ["y", "y2"]
    assert figure["data"][0]["y"] == [None, 2100.0, 2200.0, None, 2300.0]
    assert figure["layout"]["yaxis"]["title"]["text"] == "LCP p75 (ms)"
    assert (
        figure["layout"]["yaxis2"]["title"]["text"] == "Count"
        and figure["layout"]["yaxis2"]["side"] == "right"
    )


def test_three_units_are_refused_with_the_reason() -> None:
    body = {
        "dataset": "pageloads",
        "interval": "1d",
        "aggregates": [{"fn": "p75", "metric": "lcp_ms"}, {"fn": "count"}, {"fn": "p75", "metric": "cls"}],
    }
    answer = _answer("line", body, Result(["samples"], [{"samples": 12}], SERIES))
    plot = widget_plot(answer)
    assert plot is not None and plot.refusal.startswith(
        "Not drawn: LCP p75 (ms), Count, CLS p75 are in 3 units"
    )
    assert _figure(answer) is None


def test_a_cut_answer_names_the_groups_left_out() -> None:
    body = {"dataset": "pageloads", "group_by": ["release"], "interval": "1d", "order_by": "-count"}
    series = [{**SERIES[0], "group": {"release": r}} for r in ("a", "b")]
    rows = [{"release": r, "count": 1, "samples": 1} for r in ("a", "b")]
    plot = widget_plot(
        _answer("line", body, Result(["release", "count", "samples"], rows, series, truncated=True))
    )
    assert plot is not None and [line.name for line in plot.lines] == ["release=a", "release=b"]
    assert plot.note.startswith("The top 2 release values by -count; the others are not drawn")
    # With the rest answered (widget_others), it is one more line named "others", on the same days.
    answer = _answer("line", body, Result(["release", "count", "samples"], rows, series, truncated=True))
    answer.others = Result(["count", "samples"], [{"count": 9, "samples": 9}], [{**SERIES[0], "group": {}}])
    plot = widget_plot(answer)
    assert plot is not None and [line.name for line in plot.lines] == ["release=a", "release=b", "others"]
    assert plot.lines[-1].values == [None, 3, 4, None, 5] and plot.note.endswith(
        "the rest drawn as one, named 'others'."
    )


def test_a_plain_figure_is_the_json_plotly_writes_for_the_same_traces() -> None:
    """The widgets' figures are built as plain JSON (dashboards.figure_json.plain_figure) instead of through
    plotly's graph objects: the same JSON, template, property order and nulls for NaN included."""
    import json

    import plotly.graph_objects as go

    from dashboards.figure_json import figure_json, plain_figure, plain_numbers, plain_trace

    line = {
        "x": ["2026-11-01T00:00:00Z", "2026-11-02T00:00:00Z", "2026-11-03T00:00:00Z"],
        "y": plain_numbers([1.5, float("nan"), float("inf")]),
        "name": "LCP p75 <ms>",
        "customdata": ["1.5 ms", "–", "–"],
        "yaxis": "y2",
        "mode": "lines",
        "connectgaps": False,
        "line": {"dash": "dot", "width": 1.5},
        "opacity": 0.7,
        "fill": "tozeroy",
        "hovertemplate": "%{x}<br>%{customdata}<extra>%{fullData.name}</extra>",
    }
    bar = {k: v for k, v in line.items() if k in ("x", "y", "name", "customdata", "yaxis", "hovertemplate")}
    drawn = plain_figure([plain_trace("scatter", line), plain_trace("bar", bar)])
    plotted = figure_json(go.Figure([go.Scatter(**line), go.Bar(**bar)]))
    assert json.dumps(drawn) == json.dumps(plotted)
    assert drawn["data"][0]["y"] == [1.5, None, None]
