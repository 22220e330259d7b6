"""The installation operator's read-only SQL (`stacklens sql`): one statement, judged read-only by the
engine's parser before it runs (:mod:`stacklens.explore.statement_guard`), run on a warehouse connection of
its own with ``readonly = 1`` and the per-query time and memory limits, its answer cut at :data:`MAX_ROWS`
rows.

A connection of its own, opened for the statement and closed after, because settings can outlive a statement
on the connection that ran it: a statement the engine refused in read-only mode left ``readonly = 1`` on the
embedded engine's session, and every insert of the shared client failed from then on. Nothing the operator
sends reaches the shared client; a second embedded connection opens in ~10 ms.

Only the operator reaches it (the running server's local token, never an organization's API key): the marts
span every organization, so this is the operator's tool, not a tenant's."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from clickhouse_connect.driver.client import Client
from clickhouse_connect.driver.exceptions import ClickHouseError

from stacklens.explore.query import BadQuery
from stacklens.explore.run import QueryTooCostly, Result, analyst_lane, plain_value
from stacklens.explore.sql import Limits
from stacklens.explore.statement_guard import READ_ONLY, check_statement

MAX_SQL_LENGTH = 100_000
MAX_ROWS = 100_000


def run_operator_sql(connect: Callable[[], Client], sql: object, limits: Limits | None = None) -> Result:
    """Run one read-only statement on a client ``connect`` opens for it (and this closes); :class:`BadQuery`
    (field ``sql``) for a refused or failing one."""
    limits = limits or Limits()
    if not isinstance(sql, str) or not sql.strip():
        raise BadQuery("sql", "give one read-only statement, e.g. SELECT count() FROM events")
    if len(sql) > MAX_SQL_LENGTH:
        raise BadQuery("sql", f"at most {MAX_SQL_LENGTH:,} characters")
    client = connect()
    try:
        return _run(client, sql.strip().rstrip(";"), limits)
    finally:
        client.close()


def _run(client: Client, sql: str, limits: Limits) -> Result:
    check_statement(client, sql)
    read = execute_read_only(client, sql, limits, MAX_ROWS)
    return Result(read.columns, read.rows, [], read.rows_read, read.elapsed_ms, read.truncated)


@dataclass(frozen=True)
class ReadAnswer:
    """One read-only statement's answer: rows as objects by column name, what the engine read, how long."""

    columns: list[str]
    rows: list[dict[str, Any]]
    rows_read: int
    bytes_read: int
    elapsed_ms: float
    truncated: bool


def execute_read_only(
    client: Client,
    sql: str,
    limits: Limits,
    max_rows: int,
    *,
    parameters: dict[str, Any] | None = None,
    settings: dict[str, Any] | None = None,
) -> ReadAnswer:
    """Run a statement :func:`check_statement` passed with ``readonly = 1``, the per-query limits
    (:class:`Limits`) and at most ``max_rows`` rows, on the analysts' lane; ``settings`` adds engine
    settings (an organization's row filters: stacklens.explore.sql_panel). A limit hit is
    :class:`QueryTooCostly` naming it; any other refusal :class:`BadQuery` (field ``sql``) with the engine's
    message."""
    # readonly last: once it applies, the engine refuses to change any other setting of the query.
    engine: dict[str, Any] = {
        "max_execution_time": limits.seconds_sql,
        "max_memory_usage": limits.max_memory_bytes,
        "max_result_rows": max_rows,
        "max_rows_to_read": limits.max_rows_to_read,
        "read_overflow_mode": "throw",
        "max_threads": limits.max_threads,
        "os_thread_priority": limits.nice,
        "result_overflow_mode": "break",
        **(settings or {}),
        "readonly": 1,
    }
    started = time.monotonic()
    try:
        with analyst_lane():  # the operator's statements share the analysts' half of the cores
            result = client.query(sql, parameters=parameters or None, settings=engine)
    except ClickHouseError as exc:
        text = str(exc)
        if "TIMEOUT_EXCEEDED" in text:
            raise QueryTooCostly(
                f"sql: the statement ran longer than its {limits.max_execution_seconds:g} s limit"
            ) from None
        if "MEMORY_LIMIT_EXCEEDED" in text:
            raise QueryTooCostly("sql: the statement needed more than its memory limit") from None
        if "TOO_MANY_ROWS" in text:
            raise QueryTooCostly(
                f"sql: the statement would read more than its {limits.max_rows_to_read:,} rows limit"
            ) from None
        if "READONLY" in text:
            raise BadQuery("sql", READ_ONLY) from None
        first = next((line for line in text.splitlines() if "DB::Exception" in line), text.splitlines()[0])
        raise BadQuery("sql", first.strip()[:500]) from None
    columns = unique_names(list(result.column_names))
    rows = [
        {c: plain_value(v) for c, v in zip(columns, row, strict=True)}
        for row in result.result_rows[:max_rows]
    ]
    elapsed = round((time.monotonic() - started) * 1000, 1)
    summary = result.summary or {}
    return ReadAnswer(
        columns,
        rows,
        int(summary.get("read_rows", 0) or 0),
        int(summary.get("read_bytes", 0) or 0),
        elapsed,
        len(result.result_rows) >= max_rows,
    )


def unique_names(names: list[str]) -> list[str]:
    """Column names made unique (``count()``, ``count()_2``): an answer's rows are objects by column name."""
    out: list[str] = []
    for name in names:
        unique, n = name, 1
        while unique in out:
            n += 1
            unique = f"{name}_{n}"
        out.append(unique)
    return out
