"""The installation operator's read-only SQL (`stacklens sql`): one statement, run by the engine with
``readonly = 1`` and the per-query time and memory limits, its answer cut at :data:`MAX_ROWS` rows.

Only the operator reaches it (the running server's local token, never an organization's API key): the marts span
every organization, so this is the operator's tool, not a tenant's.
"""

from __future__ import annotations

import time
from typing import Any

from clickhouse_connect.driver.client import Client
from clickhouse_connect.driver.exceptions import ClickHouseError

from stacklens.explore.query import BadQuery
from stacklens.explore.run import QueryTooCostly, Result, plain_value
from stacklens.explore.sql import Limits

MAX_SQL_LENGTH = 100_000
MAX_ROWS = 100_000


def run_operator_sql(client: Client, sql: object, limits: Limits | None = None) -> Result:
    """Run one read-only statement; :class:`BadQuery` (field ``sql``) for a refused or failing one."""
    limits = limits or Limits()
    if not isinstance(sql, str) or not sql.strip():
        raise BadQuery("sql", "give one read-only statement, e.g. SELECT count() FROM events")
    if len(sql) > MAX_SQL_LENGTH:
        raise BadQuery("sql", f"at most {MAX_SQL_LENGTH:,} characters")
    # readonly last: once it applies, the engine refuses to change any other setting of the query.
    settings: dict[str, Any] = {
        "max_execution_time": limits.seconds_sql,
        "max_memory_usage": limits.max_memory_bytes,
        "max_result_rows": MAX_ROWS,
        "result_overflow_mode": "break",
        "readonly": 1,
    }
    started = time.monotonic()
    try:
        result = client.query(sql.strip().rstrip(";"), settings=settings)
    except ClickHouseError as exc:
        text = str(exc)
        if "TIMEOUT_EXCEEDED" in text:
            raise QueryTooCostly(
                f"sql: the statement ran longer than its {limits.max_execution_seconds:g} s limit"
            ) from None
        if "MEMORY_LIMIT_EXCEEDED" in text:
            raise QueryTooCostly("sql: the statement needed more than its memory limit") from None
        if "READONLY" in text:
            raise BadQuery(
                "sql", "only read-only statements run here (SELECT, SHOW, DESCRIBE, EXPLAIN)"
            ) from None
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
