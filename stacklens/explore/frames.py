"""An Explore result as a polars DataFrame, read from the engine as Arrow: what the CSV and Parquet downloads
write (up to 1,000,000 rows without a Python object per cell)."""

from __future__ import annotations

import polars as pl
from clickhouse_connect.driver.client import Client

from stacklens.explore.query import Query
from stacklens.explore.run import engine_limits, org_slot
from stacklens.explore.sql import Limits, table_statement


def explore_frame(
    client: Client, query: Query, org_id: int, project_ids: list[int], limits: Limits | None = None
) -> tuple[pl.DataFrame, bool]:
    """``(frame, truncated)``: the query's table, its columns named as the JSON answer names them."""
    limits = limits or Limits()
    columns = query.columns
    aliases = [
        *(f"g{i}" for i in range(len(query.group_by))),
        *(f"a{i}" for i in range(len(query.aggregates))),
    ]
    aliases.append("samples")
    if not project_ids:
        return pl.DataFrame({c: [] for c in columns}), False
    statement = table_statement(query, org_id, project_ids, limits, query.limit + 1)
    with org_slot(org_id), engine_limits(limits):
        table = client.query_arrow(statement.sql, parameters=statement.parameters)
    frame = pl.from_arrow(table)
    assert isinstance(frame, pl.DataFrame)
    frame = frame.select([pl.col(a).alias(c) for a, c in zip(aliases, columns, strict=True)])
    floats = [name for name, kind in frame.schema.items() if kind in (pl.Float32, pl.Float64)]
    # NaN (an aggregate of no value) is a missing value, as the JSON answer's null.
    frame = frame.with_columns(pl.col(name).fill_nan(None) for name in floats)
    truncated = frame.height > query.limit
    return frame.head(query.limit), truncated
