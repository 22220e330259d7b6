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
    # readonly last: once it applies, the engine refuses to change any other setting of the query.
    settings: dict[str, Any] = {
        "max_execution_time": limits.seconds_sql,
        "max_memory_usage": limits.max_memory_bytes,
        "max_result_rows": MAX_ROWS,
        "max_rows_to_read": limits.max_rows_to_read,
        "read_overflow_mode": "throw",
        "max_threads": limits.max_threads,
        "result_overflow_mode": "break",
        "readonly": 1,
    }
    started = time.monotonic()
    try:
        with analyst_lane():  # the operator's statements share the analysts' half of the cores
            result = client.query(sql, settings=settings)
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
    columns = list(result.column_names)
    rows = [
        {c: plain_value(v) for c, v in zip(columns, row, strict=True)}
        for row in result.result_rows[:MAX_ROWS]
    ]
    elapsed = round((time.monotonic() - started) * 1000, 1)
    read = int((result.summary or {}).get("read_rows", 0) or 0)
    return Result(columns, rows, [], read, elapsed, len(result.result_rows) >= MAX_ROWS)
