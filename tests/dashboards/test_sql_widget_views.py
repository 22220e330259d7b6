"""A SQL widget's view on the page and in the share: its columns, a bar's figure from the shared plot with the
time it took in its caption, a refusal instead of an empty chart, no Explore or CSV link."""

from __future__ import annotations

from typing import Any

from dashboards.sql_widget_views import sql_view, took
from stacklens.explore.run import Result
from stacklens.explore.widgets import WidgetAnswer

LAYOUT = {"x": 0, "y": 0, "w": 12, "h": 2}


def _answer(kind: str, columns: list[str], rows: list[list[Any]]) -> WidgetAnswer:
    result = Result(columns, [dict(zip(columns, r, strict=True)) for r in rows], [], 1_204, 12.34)
    return WidgetAnswer(0, {"title": "Loads", "kind": kind, "sql": "SELECT …"}, result=result)


def test_a_bar_is_drawn_from_the_plot_with_the_time_it_took() -> None:
    view = sql_view(_answer("bar", ["release", "loads"], [["1.0", 12], ["1.1", 3]]), LAYOUT)
    trace = view["figure"]["data"][0]
    assert (trace["type"], trace["x"], trace["y"]) == ("bar", ["1.0", "1.1"], [12.0, 3.0])
    assert view["figure"]["layout"]["title"]["text"] == "12.3 ms · 1,204 rows read"
    assert (view["explore"], view["download"], view["source"]) == ("", "", "SQL")
    assert [c.header for c in view["columns"]] == ["release", "loads"]


def test_a_table_has_no_figure_and_a_chart_without_numbers_says_why() -> None:
    table = sql_view(_answer("table", ["release", "loads"], [["1.0", 12]]), LAYOUT)
    assert table["figure"] is None and table["refusal"] == "" and table["took"] == "12.3 ms · 1,204 rows read"
    refused = sql_view(_answer("line", ["release", "name"], [["1.0", "x"]]), LAYOUT)
    assert refused["figure"] is None and refused["refusal"].startswith("Not drawn")
    assert took(Result(["a"], [], [], 0, 0.0)) == "0.0 ms · 0 rows read"
