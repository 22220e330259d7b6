"""The cells of every CSV the service writes, safe to open in a spreadsheet (OWASP "CSV injection").

A spreadsheet runs a cell that starts with ``=``, ``+``, ``-`` or ``@`` as a formula — and Excel also after a
leading tab or carriage return — so a release named ``=cmd|"/c calc"!A1`` or a page named
``=HYPERLINK("https://evil.example")`` would run on the machine of whoever opens the download. Every text cell
that starts with one of these characters is prefixed with ``'``, which spreadsheets read as "this is text"
and do not show; nothing else is changed, so the CSV still holds the value the page shows.

Numbers stay numbers: ``-5`` in a numeric column is written as ``-5`` (a spreadsheet reads a number, which
runs nothing). Only text is neutralised, and text that merely looks like a number (``"-5"`` as a string) is
neutralised too, as OWASP advises: whether a text cell is "only a number" is exactly the kind of guess an
attacker's ``-5+cmd|…`` defeats.

Two writers use these rules: :func:`csv_text` (Python's ``csv`` module: the JSON API's ``?format=csv``, the
budgets through :func:`to_csv`, one event's download) and :func:`neutralise_frame` (the polars tables of the
performance exports).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import date, datetime
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from stacklens.json_values import plain

if TYPE_CHECKING:
    import polars as pl

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
FORMULA_PATTERN = r"^[=+\-@\t\r]"  # the same starts, for polars' regular expressions
ESCAPE = "'"


def neutralise(text: str) -> str:
    """``text`` as a cell a spreadsheet shows as text, never runs."""
    return ESCAPE + text if text.startswith(FORMULA_STARTS) else text


def cell(value: Any) -> Any:
    """One CSV cell: ``None`` empty, numbers and booleans as they are, lists and maps as JSON text, dates
    as ISO 8601, anything else as its text — every text neutralised."""
    if value is None:
        return ""
    if isinstance(value, bool | int | float | Decimal):
        return value
    if isinstance(value, list | tuple | dict):
        return neutralise(json.dumps(value, default=str))
    if isinstance(value, datetime | date):
        return value.isoformat()
    return neutralise(str(value))


def csv_text(columns: Sequence[str], rows: Iterable[Mapping[str, Any] | Sequence[Any]]) -> str:
    """A header of ``columns`` and one line per row (a mapping by column name, or a sequence in column order;
    a missing column is an empty cell). Values with commas, quotes or line breaks are quoted."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([neutralise(str(c)) for c in columns])
    for row in rows:
        values = [row.get(c) for c in columns] if isinstance(row, Mapping) else list(row)
        writer.writerow([cell(v) for v in values])
    return out.getvalue()


def to_csv(rows: Sequence[Mapping[str, Any]]) -> str:
    """The rows as CSV: one column per key of the first row, values as JSON carries them
    (:func:`stacklens.json_values.plain`: times in UTC), lists and maps as JSON text, text cells
    neutralised."""
    if not rows:
        return ""
    return csv_text(list(rows[0].keys()), [plain(row) for row in rows])


def neutralise_frame(df: pl.DataFrame) -> pl.DataFrame:
    """The frame with every text column neutralised (column by column: a per-cell Python loop would cost
    seconds at 10,000 rows); numeric columns are left as they are."""
    import polars as pl  # loaded by the first table download, not by the server's start (~35 MiB)

    text = [name for name, kind in df.schema.items() if kind == pl.String]
    return df.with_columns(
        pl.when(pl.col(name).str.contains(FORMULA_PATTERN))
        .then(pl.concat_str([pl.lit(ESCAPE), pl.col(name)]))
        .otherwise(pl.col(name))
        .alias(name)
        for name in text
    )
