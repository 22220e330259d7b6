"""Named, parameterised queries from ``warehouse_sql/queries/<domain>/<name>.sql``: every statement the code
sends to the warehouse lives in such a file (tests/stacklens/warehouse/test_queries.py refuses SQL written in
Python).

Queries use ClickHouse server-side parameters (``{project_id:UInt64}``), never string formatting, so event
data can never become SQL. Where a table or column must vary, the query takes it as an ``{name:Identifier}``
parameter whose value :func:`identifier` picks from the caller's fixed set. Files are read once per process.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from functools import lru_cache
from pathlib import Path
from typing import Any

from clickhouse_connect.driver.client import Client

import warehouse_sql
from stacklens.warehouse.macros import render_macros
from stacklens.warehouse.sql_text import without_comments

QUERIES_DIR = Path(warehouse_sql.__file__).parent / "queries"
MIGRATIONS_DIR = Path(warehouse_sql.__file__).parent / "migrations"
_PARAMETER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*):")


@lru_cache(maxsize=512)
def load_query(name: str) -> str:
    """The text of ``queries/<name>.sql`` with its macros expanded and its comments removed (what the
    engine needs, sql_text says why), e.g. ``load_query("issues/list")``."""
    path = (QUERIES_DIR / f"{name}.sql").resolve()
    if QUERIES_DIR.resolve() not in path.parents:
        raise ValueError(f"query name {name!r} leaves the queries folder")
    return without_comments(render_macros(path.read_text(), f"queries/{name}.sql"))


def run_query(client: Client, name: str, parameters: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Run a named query on ``client`` (the caller's warehouse) and return its rows as dicts."""
    result = client.query(load_query(name), parameters=parameters or {})
    columns = result.column_names
    return [dict(zip(columns, row, strict=True)) for row in result.result_rows]


def float_or_none(value: Any) -> float | None:
    """A result cell as a float, ``None`` for SQL NULL and NaN (what an aggregate over no rows answers)."""
    if value is None:
        return None
    number = float(value)
    return None if number != number else number


def identifier(name: str, allowed: Collection[str]) -> str:
    """``name`` as the value of an ``{…:Identifier}`` parameter, when it is one of ``allowed`` (the
    caller's fixed set of tables or columns); anything else is refused, so an identifier never comes from
    input."""
    if name not in allowed:
        raise ValueError(f"{name!r} is not one of {', '.join(sorted(allowed))}")
    return name


def numbered(text: str, n: int) -> str:
    """A named query with every parameter renamed ``{name:…}`` → ``{name<n>:…}``: the ``n``-th copy of one
    query composed with others into a single statement (a ``UNION ALL``), each copy with parameters of its
    own."""
    return _PARAMETER.sub(lambda m: "{" + m.group(1) + str(n) + ":", text)


def scalar_row(queries: list[str]) -> str:
    """One statement answering one row: each of ``queries`` (named queries that answer one value) as a scalar
    subquery, so a step's counts and checks cost one round trip and one plan."""
    return "SELECT " + ", ".join(f"({query})" for query in queries)


# A template's own slot: a server-side parameter has a type ({v0:String}), a slot does not ({states}).
_PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")


def fill_template(name: str, **parts: str) -> str:
    """The named template with each ``{placeholder}`` replaced in one pass (a part's own text, such as the
    folded path's '{id}', is never read as a placeholder); a placeholder without a part is a programming
    error."""
    template = load_query(name)

    def part(match: re.Match[str]) -> str:
        key = match.group(1)
        if key not in parts:
            raise KeyError(f"{name}.sql: no part for {{{key}}}")
        return parts[key]

    return _PLACEHOLDER.sub(part, template)
