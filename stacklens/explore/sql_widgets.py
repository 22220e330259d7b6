"""What a dashboard's SQL widget shows (docs/explore.md, "SQL panels"), decided once for the page, the shared
snapshot and the PDF as :mod:`stacklens.explore.widget_plot` decides it for Explore widgets:

- a table: every column the statement answers, headed by its name, numbers right-aligned as plain numbers;
- a line or bar: the first column names each point (a time when every value is one: the x axis is then
  time), every other column of numbers is one line or bar set on one y axis; a statement without such a
  column is not drawn, and the widget says why instead of drawing an empty chart;
- a number: the first cell of the first row.

A statement's answer carries no unit, so nothing is converted: the numbers are the engine's."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from stacklens.explore.columns import GROUP, Column
from stacklens.explore.run import Result
from stacklens.explore.widget_plot import MAX_LINES, PlotLine, WidgetPlot
from stacklens.explore.widgets import WidgetAnswer
from stacklens.metrics.units import MISSING, plain_number

CHART_KINDS = ("line", "bar")


def is_sql(answer: WidgetAnswer) -> bool:
    return "sql" in answer.widget


def _numeric(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def numeric_columns(result: Result) -> list[str]:
    """The columns whose every non-null value is a number (and that hold at least one)."""
    out = []
    for name in result.columns:
        values = [row.get(name) for row in result.rows if row.get(name) is not None]
        if values and all(_numeric(v) for v in values):
            out.append(name)
    return out


def sql_columns(result: Result | None) -> list[Column]:
    """The answer's columns as the table heads them: the statement's names; numbers marked as numbers."""
    if result is None:
        return []
    numbers = set(numeric_columns(result))
    return [Column(name, name, GROUP, number=name in numbers) for name in result.columns]


def cell(column: Column, value: Any) -> str:
    """A cell as the table writes it: numbers plainly (``1234.5``), times and texts as answered."""
    if value is None:
        return MISSING
    if column.number and _numeric(value):
        return plain_number(value)
    return str(value)


def _number(value: Any) -> float | None:
    return float(value) if _numeric(value) else None


def _is_time(value: Any) -> bool:
    if not isinstance(value, str) or len(value) < 10:
        return False
    try:
        datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


def sql_plot(answer: WidgetAnswer) -> WidgetPlot | None:
    """What a line or bar SQL widget draws (None for a table, a number or an unanswered widget)."""
    result = answer.result
    if not is_sql(answer) or answer.widget["kind"] not in CHART_KINDS or result is None or not result.rows:
        return None
    first, rest = result.columns[0], result.columns[1:]
    numbers = [name for name in numeric_columns(result) if name in rest]
    if not numbers:
        return WidgetPlot(
            False,
            [],
            refusal="Not drawn: a chart needs a first column of labels or times and at least one column of "
            "numbers after it; this answer has none (show it as a table).",
        )
    labels = [row.get(first) for row in result.rows]
    time = all(_is_time(v) for v in labels)
    plot = WidgetPlot(time, ["" if v is None else str(v) for v in labels])
    for name in numbers[:MAX_LINES]:
        values = [_number(row.get(name)) for row in result.rows]
        texts = [MISSING if v is None else plain_number(v) for v in values]
        plot.lines.append(PlotLine(name, name, 1, values, texts))
    plot.axes = [" / ".join(numbers[:MAX_LINES])]
    notes = []
    if len(numbers) > MAX_LINES:
        notes.append(f"The first {MAX_LINES} of {len(numbers)} columns of numbers are drawn.")
    if result.truncated:
        notes.append(f"The answer was cut at {len(result.rows):,} rows.")
    plot.note = " ".join(notes)
    return plot


def sql_summary(answer: WidgetAnswer, most: int) -> list[str]:
    """The widget in words, for a report's summary: its number, or its first ``most`` rows."""
    title = answer.widget["title"]
    result = answer.result
    if answer.error:
        return [f"{title}: not answered ({answer.error})"]
    if result is None or not result.rows:
        return [f"{title}: no rows in this window"]
    columns = sql_columns(result)
    if answer.widget["kind"] == "number":
        return [f"{title}: {cell(columns[0], answer.number)}"]
    lines = [f"{title}:"]
    for row in result.rows[:most]:
        lines.append("  " + ", ".join(f"{c.header} {cell(c, row.get(c.key))}" for c in columns))
    return lines


def sql_csv_rows(answer: WidgetAnswer) -> list[dict[str, Any]]:
    """The widget in a CSV report's rows (``widget``, ``group``, ``column``, ``value``; a statement has no
    previous period, so ``previous`` and ``change_pct`` stay empty): one row per answered row and column of
    numbers, its other columns as the group (``release=1.4.0``); an answer without numbers gives each cell.
    A number widget gives its first cell. The CSV writer neutralises the cells
    (:func:`stacklens.csv_cells.csv_text`)."""
    result = answer.result
    if answer.error or result is None or not result.rows:
        return []
    title = answer.widget["title"]
    if answer.widget["kind"] == "number":
        return [{"widget": title, "group": "", "column": result.columns[0], "value": answer.number}]
    numbers = [c for c in numeric_columns(result) if c != result.columns[0]] or numeric_columns(result)
    values = numbers or result.columns
    groups = [c for c in result.columns if c not in values]
    out = []
    for row in result.rows:
        group = ", ".join(f"{g}={'' if row.get(g) is None else row.get(g)}" for g in groups)
        out += [{"widget": title, "group": group, "column": c, "value": row.get(c)} for c in values]
    return out
