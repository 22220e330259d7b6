"""A page's tables as CSV (built with polars, streamed in chunks) and as one JSON document.

CSV cells: numbers as numbers (in the unit the column's name ends with: the catalog's, never rounded),
times as ISO 8601, lists and maps as JSON text; text cells are neutralised against formulas by
:func:`stacklens.csv_cells.neutralise_frame` (the rules every CSV of the service follows) — the rest is
exactly the value the page shows. The page's CSV download and the JSON API's ``?format=csv`` are both
written by :func:`frame` and :func:`csv_chunks`, so the same table gives the same bytes."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import date, datetime
from typing import TYPE_CHECKING, Any

from stacklens.csv_cells import neutralise_frame
from stacklens.json_values import plain
from stacklens.performance.exports.tables import PAGES, PageData, Table, csv_column, table_rows
from stacklens.view_filters import ViewFilters

if TYPE_CHECKING:
    import polars as pl

CHUNK_ROWS = 2_000


def _cells(values: list[Any]) -> list[Any]:
    """One column's values for CSV: times as ISO 8601, lists and maps as JSON text, the rest as is."""
    sample = next((v for v in values if v is not None), None)
    if isinstance(sample, datetime | date):
        return [plain(v) for v in values]
    if isinstance(sample, list | dict):
        return [None if v is None else json.dumps(plain(v)) for v in values]
    return values


def frame(spec: Table, data: PageData) -> pl.DataFrame:
    """The table as a DataFrame with exactly its columns, named for CSV (:func:`csv_column`: the unit at
    the end); nested values as JSON text, formulas defused. Built column by column (a per-cell conversion
    would cost seconds at 10,000 rows)."""
    import polars as pl  # loaded by the first table download, not by the server's start (~35 MiB)

    rows = spec.rows(data)
    if not rows:
        return pl.DataFrame(schema={csv_column(column): pl.String for column in spec.columns})
    # strict=False: a column of ints and floats becomes Float64, as JSON would read it
    df = pl.DataFrame(
        [pl.Series(csv_column(c), _cells([row.get(c) for row in rows]), strict=False) for c in spec.columns]
    )
    return neutralise_frame(df)


def csv_chunks(df: pl.DataFrame, chunk_rows: int = CHUNK_ROWS) -> Iterator[bytes]:
    """The CSV in pieces of ``chunk_rows`` rows (the header first), so a large table is sent while it is
    written rather than held as one string."""
    yield df.head(0).write_csv().encode()
    for start in range(0, df.height, chunk_rows):
        yield df.slice(start, chunk_rows).write_csv(include_header=False).encode()


def document(
    page: str, data: PageData, filters: ViewFilters, extra: dict[str, str] | None = None
) -> dict[str, object]:
    """Every table of the page with its rows, and the filters that produced them."""
    return {
        "page": page,
        "filters": {**filters.describe(), **(extra or {})},
        "tables": {spec.name: table_rows(spec, data) for spec in PAGES[page]},
    }
