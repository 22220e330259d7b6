"""An organization's SQL (docs/explore.md, "SQL panels"): one read-only statement over the warehouse's
documented tables (:data:`TABLES`), for `POST /api/sql`, the SQL editor page and a dashboard's SQL widget.

It passes the operator's guard first (:func:`stacklens.explore.statement_guard.check_statement`: one
statement, read-only, no function that reaches files, the network or other servers, no ``SETTINGS``), then
a tenant's rules, read from the engine's resolved query tree (``EXPLAIN QUERY TREE``: common table
expressions, subqueries and joins resolved to the tables they read, nothing run):

- only ``SELECT`` (or ``WITH … SELECT``);
- every table read is one of :data:`TABLES` in the warehouse's database (no ``system.*``, no marts of other
  kinds), every table function one of :data:`TABLE_FUNCTIONS` (``numbers``, ``values``; never ``merge`` or
  ``view``, which reach tables by other names), and no dictionary or join-table lookup.

The organization's isolation is the server's, not the statement's: every documented table is read through the
engine's ``additional_table_filters`` (``org_id = <the caller's organization>``), set by the server beside
``readonly = 1``, so however the statement names, joins or nests a table it sees only its organization's rows.
It runs under the same query budgets as `stacklens sql` (:class:`stacklens.explore.sql.Limits`, on the
analysts' lane) and the organization's Explore slots (:func:`stacklens.explore.run.org_slot`)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from clickhouse_connect.driver.client import Client
from clickhouse_connect.driver.exceptions import ClickHouseError

from stacklens.explore.operator_sql import MAX_SQL_LENGTH, ReadAnswer, execute_read_only
from stacklens.explore.query import BadQuery
from stacklens.explore.run import org_slot
from stacklens.explore.sql import Limits
from stacklens.explore.statement_guard import check_statement
from stacklens.metrics.units import BYTES, format_in
from stacklens.view_filters import RANGES
from stacklens.warehouse.queries import fill_template, load_query

# The documented tables an organization's SQL reads, each with what one row is.
TABLES: dict[str, str] = {
    "events": "one error or message event (issue_id, level, message, release, environment, tags)",
    "issues": "one issue: the events grouped by fingerprint (title, culprit, level, first and last seen)",
    "transactions": "one traced transaction (name, op, duration, status)",
    "spans": "one span of a trace (op, description, duration)",
    "logs": "one log line (level, body, attributes)",
    "sessions": "one release-health session update (status, errors, release)",
    "pageload_facts": "one page load with its timings and web vitals (page, release, browser, load_ms, lcp …)",
    "resource_facts": "one resource a page loaded (kind, size, duration)",
    "endpoint_facts": "one API call seen from a page or a server (method, path, status, duration)",
    "inp_interactions": "one interaction and its INP (target, page, duration)",
    "monitor_checks": "one cron check-in or uptime probe (monitor, status, duration)",
    "replays": "one session replay (duration, pages, errors)",
    "outcomes": "items accepted and dropped per hour, category and reason",
}
# Table functions that read no table and nothing outside the engine.
TABLE_FUNCTIONS = frozenset({"numbers", "numbers_mt", "zeros", "zeros_mt", "values", "generate_series",
                             "generateseries", "null"})  # fmt: skip
SQL_KINDS = ("table", "bar", "line", "number")  # how a dashboard's SQL widget draws its answer
SELECT_ONLY = "only SELECT statements run here (WITH … SELECT too)"
MAX_ROWS = 10_000  # rows a panel answers (the editor's table, a widget); the statement should aggregate
MAX_PARAMS = 50
PARAM_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
_TABLE = re.compile(r"\btable_name: ([^,\s]+)")
_TABLE_FUNCTION = re.compile(r"\btable_function_name: ([^,\s]+)")
_FUNCTION = re.compile(r"\bfunction_name: ([^,\s]+)")
_VARIABLE = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")
_POSITION = re.compile(r"failed at position (\d+)(?:.*?\(line (\d+), col (\d+)\))?")


class SqlRefused(BadQuery):
    """A statement refused or failing (400, field ``sql``), with where the engine's parser stopped when it
    says (``position``: 1-based character; ``line`` and ``col``)."""

    def __init__(self, message: str) -> None:
        super().__init__("sql", message)
        found = _POSITION.search(message)
        self.position: int | None = int(found.group(1)) if found else None
        self.line: int | None = int(found.group(2)) if found and found.group(2) else None
        self.col: int | None = int(found.group(3)) if found and found.group(3) else None

    @property
    def message(self) -> str:
        return str(self).split(": ", 1)[1]


@dataclass(frozen=True)
class PanelAnswer:
    """``POST /api/sql``'s answer: columns, rows as arrays in the columns' order, the time it took and what
    the engine read."""

    columns: list[str]
    rows: list[list[Any]]
    elapsed_ms: float
    rows_read: int
    bytes_read: int
    truncated: bool

    def as_json(self) -> dict[str, Any]:
        return {
            "columns": self.columns,
            "rows": self.rows,
            "elapsed_ms": self.elapsed_ms,
            "rows_read": self.rows_read,
            "bytes_read": self.bytes_read,
            "truncated": self.truncated,
        }


def panel_limits() -> Limits:
    """The query budgets every statement here runs under (:func:`answer_panel`'s, unless a caller passes
    its own): the same as `stacklens sql`'s."""
    return Limits()


def budget_words(limits: Limits | None = None) -> str:
    """The budgets a statement runs under, in words, from the same :class:`Limits` :func:`answer_panel`
    applies (the editor's introduction says them): ``20 s, 1.9 GiB of memory and 1,000,000,000 rows read per
    statement, 10,000 rows answered``."""
    limits = limits or panel_limits()
    seconds = f"{limits.seconds_sql}\u00a0s"  # never "20" at a line's end and "s" on the next
    memory = format_in(BYTES, limits.max_memory_bytes)
    return (
        f"{seconds}, {memory} of memory and {limits.max_rows_to_read:,} rows read per statement, "
        f"{MAX_ROWS:,} rows answered"
    )


def check_sql_text(sql: object, name: str = "sql") -> str:
    """The statement's text, trimmed of a final ``;``; :class:`BadQuery` (field ``name``) when it is no text
    or too long."""
    if not isinstance(sql, str) or not sql.strip():
        raise BadQuery(name, "give one read-only statement, e.g. SELECT count() FROM events")
    if len(sql) > MAX_SQL_LENGTH:
        raise BadQuery(name, f"at most {MAX_SQL_LENGTH:,} characters")
    return sql.replace("\r\n", "\n").strip().rstrip(";").strip()


def check_params(raw: object) -> dict[str, Any]:
    """``params``: an object of names (``[A-Za-z_]\\w*``) to strings, numbers, booleans or null, bound by the
    engine where the statement says ``{name:Type}`` (never pasted into the text)."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise BadQuery("params", 'must be an object, e.g. {"release": "1.4.0"}')
    if len(raw) > MAX_PARAMS:
        raise BadQuery("params", f"at most {MAX_PARAMS} parameters")
    out: dict[str, Any] = {}
    for name, value in raw.items():
        if not isinstance(name, str) or not PARAM_NAME.match(name):
            raise BadQuery("params", f"{str(name)[:64]!r} is no parameter name (letters, digits, _)")
        if value is not None and not isinstance(value, str | int | float | bool):
            raise BadQuery(f"params.{name}", "must be a string, a number, a boolean or null")
        if isinstance(value, str) and len(value) > 10_000:
            raise BadQuery(f"params.{name}", "at most 10,000 characters")
        out[name] = value
    return out


def table_filters(org_id: int) -> str:
    """The engine's ``additional_table_filters`` keeping every documented table to the organization's rows."""
    org = int(org_id)
    return "{" + ", ".join(f"'{table}': 'org_id = {org}'" for table in sorted(TABLES)) + "}"


def check_panel_statement(client: Client, sql: str, database: str, parameters: dict[str, Any]) -> None:
    """Refuse (:class:`SqlRefused`) what the operator's guard refuses, anything but a SELECT, and a read of
    anything but the documented tables (see the module's docstring)."""
    try:
        check_statement(client, sql, parameters)
    except BadQuery as exc:
        raise SqlRefused(str(exc).split(": ", 1)[1]) from None
    first = sql.lstrip("( \n\t").split(None, 1)
    if not first or first[0].upper() not in ("SELECT", "WITH"):
        raise SqlRefused(SELECT_ONLY)
    try:
        tree = client.query(
            fill_template("explore/statement_tree", statement=sql), parameters=parameters or None
        )
    except ClickHouseError as exc:
        raise SqlRefused(_engine_message(str(exc))) from None
    text = "\n".join(str(row[0]) for row in tree.result_rows)
    for name in _TABLE.findall(text):
        if name == "system.one":  # what a SELECT without FROM reads: one row, one column (dummy = 0)
            continue
        db, _, table = name.rpartition(".")
        if db.strip("`") != database or table.strip("`") not in TABLES:
            raise SqlRefused(f"{name} is not a table this SQL reads; use {', '.join(TABLES)}")
    for name in _TABLE_FUNCTION.findall(text):
        if name.lower() not in TABLE_FUNCTIONS:
            raise SqlRefused(f"the table function {name}() does not run here; read the documented tables")
    for name in _FUNCTION.findall(text):
        if name.lower().startswith(("dict", "joinget")):
            raise SqlRefused(f"{name}() reads outside the documented tables and does not run here")


def _engine_message(text: str) -> str:
    lines = text.splitlines() or [""]
    line = next((x for x in lines if "DB::Exception" in x), lines[0]).strip()
    return line.split("DB::Exception: ", 1)[-1][:500]


def run_panel_sql(
    connect: Callable[[], Client],
    database: str,
    org_id: int,
    sql: object,
    params: object = None,
    limits: Limits | None = None,
) -> PanelAnswer:
    """Run one organization's statement on a client ``connect`` opens for it (and this closes); see
    :func:`answer_panel`."""
    client = connect()
    try:
        return answer_panel(client, database, org_id, sql, params, limits)
    finally:
        client.close()


def answer_panel(
    client: Client,
    database: str,
    org_id: int,
    sql: object,
    params: object = None,
    limits: Limits | None = None,
) -> PanelAnswer:
    """Run one organization's statement within its Explore slots and the query budgets; :class:`SqlRefused`
    for a refused or failing one, :class:`stacklens.explore.run.QueryTooCostly` naming the budget it went
    over. Nothing refused reaches the engine as a statement to run, and a SELECT leaves no setting on the
    connection, so a page's analyst connection can run it between its other widgets."""
    text = check_sql_text(sql)
    parameters = check_params(params)
    limits = limits or panel_limits()
    with org_slot(org_id):
        check_panel_statement(client, text, database, parameters)
        try:
            read = execute_read_only(
                client,
                text,
                limits,
                MAX_ROWS,
                parameters=parameters,
                settings={"additional_table_filters": table_filters(org_id)},
            )
        except BadQuery as exc:
            if isinstance(exc, SqlRefused) or exc.field != "sql":
                raise
            raise SqlRefused(_engine_message(str(exc).split(": ", 1)[1])) from None
    return _panel(read)


def _panel(read: ReadAnswer) -> PanelAnswer:
    rows = [[row.get(c) for c in read.columns] for row in read.rows]
    return PanelAnswer(read.columns, rows, read.elapsed_ms, read.rows_read, read.bytes_read, read.truncated)


def window_params(filters: dict[str, str], now: datetime | None = None) -> dict[str, Any]:
    """The parameters a dashboard's SQL widget may use: its window ``{since:DateTime}``/``{until:DateTime}``
    (the filter bar's range, whole minutes, UTC), ``{environment:String}`` and ``{release:String}`` ('' for
    any)."""
    until = (now or datetime.now(UTC)).astimezone(UTC).replace(second=0, microsecond=0)
    since = until - RANGES[filters.get("range") or "30d"]
    return {
        "since": since.strftime("%Y-%m-%d %H:%M:%S"),
        "until": until.strftime("%Y-%m-%d %H:%M:%S"),
        "environment": filters.get("environment") or "",
        "release": filters.get("release") or "",
    }


def documented_columns(client: Client) -> dict[str, list[tuple[str, str]]]:
    """Each documented table's columns and types, in the table's order (the editor lists them)."""
    result = client.query(load_query("explore/panel_columns"), parameters={"tables": sorted(TABLES)})
    out: dict[str, list[tuple[str, str]]] = {table: [] for table in TABLES}
    for table, name, kind in result.result_rows:
        out[str(table)].append((str(name), str(kind)))
    return out


def with_variables(sql: str, variables: dict[str, str]) -> tuple[str, dict[str, Any]]:
    """A dashboard's ``$name`` variables in a SQL widget's statement as engine parameters (``{name:String}``,
    bound, never pasted): the statement and the parameters' values. Only the dashboard's variable names are
    replaced."""
    used: dict[str, Any] = {}

    def bind(found: re.Match[str]) -> str:
        name = found.group(1)
        if name not in variables:
            return found.group(0)
        used[name] = variables[name]
        return "{" + name + ":String}"

    return _VARIABLE.sub(bind, sql), used


def sql_widget_statement(
    widget: dict[str, Any], filters: dict[str, str], now: datetime
) -> tuple[str, dict[str, Any]]:
    """A dashboard's SQL widget as it runs under the page's filters at ``now``: its statement, with the
    dashboard's variables as ``$name`` bound (:func:`with_variables`), and its parameters — the window's
    (:func:`window_params`) and the variables' values. :func:`answer_panel` answers it (on the page's
    analyst connection, kept a minute by :mod:`stacklens.explore.widget_cache` as every widget's answer)."""
    sql, bound = with_variables(str(widget["sql"]), dict(widget.get("sql_variables") or {}))
    return sql, {**window_params(filters, now), **bound}
