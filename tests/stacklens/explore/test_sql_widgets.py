"""What a SQL widget shows, decided once for the page, the share and the PDF: its columns as the statement
names them (numbers marked), a line or bar from the first column and every column of numbers after it (a
time axis when the first column holds times), a refusal instead of an empty chart, a number's first cell and
the words of a report's summary."""

from __future__ import annotations

from typing import Any

from stacklens.explore.run import Result
from stacklens.explore.sql_widgets import cell, sql_columns, sql_plot, sql_summary
from stacklens.explore.widgets import WidgetAnswer


def _answer(kind: str, columns: list[str], rows: list[list[Any]], truncated: bool = False) -> WidgetAnswer:
    result = Result(columns, [dict(zip(columns, r, strict=True)) for r in rows], [], 120, 3.5, truncated)
    return WidgetAnswer(0, {"title": "Loads", "kind": kind, "sql": "SELECT …"}, result=result)


def test_columns_and_cells_as_the_statement_answers_them() -> None:
    answer = _answer("table", ["release", "loads", "p75"], [["1.0", 12, 812.5], ["1.1", 3, None]])
    columns = sql_columns(answer.result)
    assert [(c.header, c.number) for c in columns] == [("release", False), ("loads", True), ("p75", True)]
    assert [cell(c, answer.result.rows[0][c.key]) for c in columns] == ["1.0", "12", "812.5"]
    assert cell(columns[2], None) == "–"
    assert sql_plot(answer) is None  # a table draws no chart


def test_a_bar_draws_every_column_of_numbers_by_the_first_column() -> None:
    plot = sql_plot(_answer("bar", ["release", "loads", "errors"], [["1.0", 12, 1], ["1.1", 3, 0]]))
    assert plot is not None and not plot.refusal and not plot.time
    assert plot.x == ["1.0", "1.1"]
    assert [(line.name, line.values) for line in plot.lines] == [
        ("loads", [12.0, 3.0]),
        ("errors", [1.0, 0.0]),
    ]
    assert plot.axes == ["loads / errors"]


def test_a_line_over_times_has_a_time_axis_and_a_cut_answer_says_so() -> None:
    rows = [["2026-11-01T00:00:00Z", 4], ["2026-11-02T00:00:00Z", None]]
    plot = sql_plot(_answer("line", ["day", "loads"], rows, truncated=True))
    assert plot is not None and plot.time and plot.lines[0].values == [4.0, None]
    assert "cut at 2 rows" in plot.note


def test_an_answer_without_numbers_is_refused_not_drawn_empty() -> None:
    plot = sql_plot(_answer("bar", ["release", "name"], [["1.0", "a"]]))
    assert plot is not None and plot.refusal.startswith("Not drawn: a chart needs")


def test_a_number_is_its_first_cell_and_the_summary_words_it() -> None:
    answer = _answer("number", ["loads"], [[1234]])
    assert answer.number == 1234
    assert sql_summary(answer, 5) == ["Loads: 1234"]
    table = _answer("table", ["release", "loads"], [["1.0", 12], ["1.1", 3]])
    assert sql_summary(table, 1) == ["Loads:", "  release 1.0, loads 12"]
    failed = WidgetAnswer(0, {"title": "Loads", "kind": "table", "sql": "x"}, error="sql: nope")
    assert sql_summary(failed, 5) == ["Loads: not answered (sql: nope)"]
