"""Named, parameterised read queries from ``warehouse_sql/queries/<domain>/<name>.sql``.

Queries use ClickHouse server-side parameters (``{project_id:UInt64}``), never string formatting, so event
data can never become SQL. Files are read once per process.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

from clickhouse_connect.driver.client import Client

import warehouse_sql
from stacklens.warehouse.macros import render_macros
from stacklens.warehouse.sql_text import without_comments

QUERIES_DIR = Path(warehouse_sql.__file__).parent / "queries"
MIGRATIONS_DIR = Path(warehouse_sql.__file__).parent / "migrations"


@lru_cache(maxsize=512)
def load_query(name: str) -> str:
    """The text of ``queries/<name>.sql`` with its macros expanded and its comments removed (what the engine needs,
    sql_text says why), e.g. ``load_query("issues/list")``."""
    path = (QUERIES_DIR / f"{name}.sql").resolve()
    if QUERIES_DIR.resolve() not in path.parents:
        raise ValueError(f"query name {name!r} leaves the queries folder")
    return without_comments(render_macros(path.read_text(), f"queries/{name}.sql"))


def run_query(client: Client, name: str, parameters: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Run a named query on ``client`` (the caller's warehouse) and return its rows as dicts."""
    result = client.query(load_query(name), parameters=parameters or {})
    columns = result.column_names
    return [dict(zip(columns, row, strict=True)) for row in result.result_rows]
