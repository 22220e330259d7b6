"""Named, parameterised queries from ``warehouse_sql/queries/<domain>/<name>.sql``: every statement the code
sends to the warehouse lives in such a file (tests/stacklens/warehouse/test_queries.py refuses SQL written in
Python).

Queries use ClickHouse server-side parameters (``{project_id:UInt64}``), never string formatting, so event
data can never become SQL. Where a table or column must vary, the query takes it as an ``{name:Identifier}``
parameter whose value :func:`identifier` picks from the caller's fixed set. Files are read once per process.
The front door's duplicate look-ups are the one exception, and it is still not free formatting:
:func:`inlined` writes their few parameter types in as literals, each value checked or escaped by its type.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

from clickhouse_connect.driver.binding import escape_str, must_escape, quote_identifier
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


# A parameter with its type: {org0:UInt64}, {ids3:Array(UUID)}.
_TYPED_PARAMETER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*):([A-Za-z0-9_()]+)\}")
_UUID_TEXT = re.compile(r"[0-9A-Fa-f]{8}-?[0-9A-Fa-f]{4}-?[0-9A-Fa-f]{4}-?[0-9A-Fa-f]{4}-?[0-9A-Fa-f]{12}")


def inlined(text: str, parameters: Mapping[str, Any]) -> str:
    """``text`` with each parameter written in as a literal of its type: ``UInt64`` (an int), ``String`` and
    ``Array(String)`` (escaped as the driver's own client-side binding escapes), ``Array(UUID)`` (each value
    must read as a UUID), ``Identifier`` (quoted; the value comes from :func:`identifier`). Any other type, or
    a value that is not of its type, raises ``ValueError``.

    Why: the embedded engine charges ~2 ms for any statement that carries server-side parameters, on top of
    the ~3 ms of a small look-up, and the front door looks duplicates up for every group of requests it
    accepts (stacklens/ingest/writer.py). Only those look-ups use this."""

    def literal(match: re.Match[str]) -> str:
        name, kind = match.group(1), match.group(2)
        value = parameters[name]
        if kind == "UInt64" and isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            return str(value)
        if kind == "String" and isinstance(value, str):
            return _string(value)
        if kind == "Identifier" and isinstance(value, str):
            return str(quote_identifier(value))
        if kind == "Array(String)" and isinstance(value, list | tuple):
            return "[" + ", ".join(_string(item) for item in value) + "]"
        if (
            kind == "Array(UUID)"
            and isinstance(value, list | tuple)
            and all(isinstance(item, str) and _UUID_TEXT.fullmatch(item) for item in value)
        ):
            return "CAST([" + ", ".join(f"'{item}'" for item in value) + "] AS Array(UUID))"
        raise ValueError(f"parameter {name!r} cannot be written in as {kind}: {value!r:.80}")

    return _TYPED_PARAMETER.sub(literal, text)


def _string(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{value!r:.80} is not a string")
    # Most values (ids, digests) hold nothing to escape: checked with a substring search each, in C.
    return f"'{escape_str(value) if any(char in value for char in must_escape) else value}'"


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
