"""Named queries: read from their files with macros expanded and comments removed, run with parameters; their
result cells as floats."""

from __future__ import annotations

import ast
import re
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import pytest

from stacklens.settings import Settings
from stacklens.warehouse.client import get_warehouse
from stacklens.warehouse.migrations import apply_migrations
from stacklens.warehouse.queries import (
    QUERIES_DIR,
    fill_template,
    float_or_none,
    identifier,
    inlined,
    load_query,
    numbered,
    run_query,
    scalar_row,
)

ROOT = Path(__file__).resolve().parents[3]
# The first-party code that runs in the service, its pipelines and its agents (tests and benchmarks excluded).
SOURCES = (
    "api",
    "dashboards",
    "demo",
    "pipelines",
    "shipper",
    "stacklens",
    "stacklens_contract",
    "stacklens_sdk",
)
# A string that opens with a statement's first words, as the code writes SQL (upper case).
STATEMENT = re.compile(
    r"^\s*(SELECT|INSERT\s+INTO|ALTER\s+TABLE|CREATE\s+(OR\s+REPLACE\s+)?(TABLE|DATABASE|SCHEMA|VIEW|MATERIALIZED"
    r"|DICTIONARY|FUNCTION)|OPTIMIZE\s+TABLE|SYSTEM\s+[A-Z]+|DROP\s+(TABLE|DATABASE|VIEW|DICTIONARY|SCHEMA)|WITH"
    r"|TRUNCATE|DELETE\s+FROM|UPDATE\s+\w+\s+SET|RENAME\s+TABLE|EXCHANGE\s+TABLES)\s"
)
# The statements that stay in Python, by file and opening words, each with why.
ALLOWED = {
    (
        "api/routers/sql.py",
        "SELECT",
    ): "POST /api/sql's OpenAPI example: a statement as a member writes it, not one the product runs",
    (
        "dashboards/routers/sql_editor.py",
        "SELECT",
    ): "the SQL editor's starting text, a member's statement to edit",
    ("stacklens/warehouse/queries.py", "SELECT"): "scalar_row: composes named queries as one row of scalar "
    "subqueries; no text of its own",
    (
        "stacklens/warehouse/cluster.py",
        "CREATE TABLE",
    ): "the migration runner's cluster rendering: the Distributed "
    "table of a table a migration file creates, named by that file",
    (
        "stacklens/warehouse/migrations.py",
        "ALTER TABLE",
    ): "the migration runner re-issues a migration file's own TTL clause with a new retention",
    (
        "stacklens/warehouse/client.py",
        "CREATE DATABASE",
    ): "creates the configured database before anything else "
    "runs, with the operator's ON CLUSTER clause; not verified to take server-side parameters on a cluster",
    (
        "stacklens/control/db.py",
        "SELECT",
    ): "control store (PostgreSQL via SQLAlchemy): the migration advisory lock",
    (
        "stacklens/control/grouping_claims.py",
        "SELECT",
    ): "control store (PostgreSQL via SQLAlchemy): the issue-grouping advisory lock and its unlock",
    ("stacklens/control/db.py", "CREATE SCHEMA"): "control store (PostgreSQL via SQLAlchemy): the configured "
    "schema, quoted by the dialect",
    (
        "api/routers/health.py",
        "SELECT",
    ): "control store (SQLAlchemy): the health check's probe of the database",
}
# Alembic migrations of the control store are Python by design.
ALLOWED_DIRS = ("stacklens/control/migrations/versions/",)


def test_a_query_is_its_file_without_comments_and_with_macros_expanded() -> None:
    written = (QUERIES_DIR / "explore" / "answer.sql").read_text()
    assert "--" in written and "${" in written
    loaded = load_query("explore/answer")
    assert "--" not in loaded and "${" not in loaded
    assert load_query("explore/answer") is loaded  # read once per process


def test_a_name_cannot_leave_the_queries_folder() -> None:
    with pytest.raises(ValueError, match="leaves the queries folder"):
        load_query("../migrations/0001_events")


def test_rows_come_back_as_dicts_by_column_name(settings: Settings) -> None:
    apply_migrations(settings)
    client = get_warehouse(settings)
    at = datetime(2026, 11, 20, 12, tzinfo=UTC)
    client.insert(
        "logs",
        [
            [1, 1, at, "checkout", "a"],
            [1, 1, at, "checkout", "b"],
            [1, 1, at, "search", "c"],
            [2, 1, at, "other", "d"],
        ],
        column_names=["org_id", "project_id", "timestamp", "service", "dedup_key"],
    )
    window = {"since": datetime(2026, 11, 20, tzinfo=UTC), "until": datetime(2026, 11, 21, tzinfo=UTC)}
    rows = run_query(client, "logs/services", {"org_id": 1, "project_id": 1, **window})
    assert rows == [{"service": "checkout", "records": 2}, {"service": "search", "records": 1}]


def test_an_identifier_comes_from_the_callers_fixed_set() -> None:
    assert identifier("events", ("events", "logs")) == "events"
    with pytest.raises(ValueError, match="is not one of events, logs"):
        identifier("events; DROP TABLE logs", ("events", "logs"))


def test_copies_of_a_query_get_parameters_of_their_own() -> None:
    text = "SELECT {table:String} FROM {table:Identifier} WHERE id IN {ids:Array(UUID)} AND x = '{literal}'"
    assert numbered(text, 3) == (
        "SELECT {table3:String} FROM {table3:Identifier} WHERE id IN {ids3:Array(UUID)} AND x = '{literal}'"
    )
    assert scalar_row(["SELECT 1", "SELECT 2"]) == "SELECT (SELECT 1), (SELECT 2)"


def test_parameters_written_in_answer_as_the_engines_own_and_nothing_else_passes(settings: Settings) -> None:
    apply_migrations(settings)
    client = get_warehouse(settings)
    text = (
        "SELECT {name:String} AS s, {n:UInt64} AS n, {ids:Array(UUID)} AS u, {words:Array(String)} AS w, "
        "toUUID('0a7c9e2a-3f1b-4c6d-9e8f-0123456789ab') IN {ids:Array(UUID)} AS found FROM {table:Identifier}"
    )
    parameters = {
        "name": "it's a \\ back\tslash `tick` \n and {braces:String}",
        "n": 18446744073709551615,
        "ids": ["0a7c9e2a3f1b4c6d9e8f0123456789ab", "0a7c9e2a-3f1b-4c6d-9e8f-0123456789ac"],
        "words": ["a'b", "", "c\\d"],
        "table": identifier("one", ("one",)),
    }
    system = get_warehouse(settings.model_copy(update={"warehouse_database": "system"}))
    inlined_rows = system.query(inlined(text, parameters)).result_rows
    assert inlined_rows == system.query(text, parameters=parameters).result_rows
    assert inlined_rows[0][0] == parameters["name"] and inlined_rows[0][4] == 1
    assert client.query(
        inlined("SELECT count() FROM events WHERE org_id = {org:UInt64}", {"org": 7})
    ).result_rows == [(0,)]
    for kind, value in [
        ("UInt64", "1 OR 1 = 1"),
        ("UInt64", -1),
        ("UInt64", True),
        ("String", 5),
        ("Array(UUID)", ["x') OR ('1"]),
        ("Array(String)", ["ok", 3]),
        ("DateTime", "2026-11-26 10:00:00"),
    ]:
        with pytest.raises(ValueError, match=r"cannot be written in|is not a string"):
            inlined(f"SELECT {{v:{kind}}}", {"v": value})


def inline_statements(source: str) -> list[tuple[int, str]]:
    """(line, opening words) of every SQL statement written in ``source``: a string literal or an f-string
    whose text opens like a statement (docstrings are prose and are left out)."""
    tree = ast.parse(source)
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
    }
    inside_fstrings = {
        id(part) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for part in node.values
    }
    texts: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if id(node) not in docstrings and id(node) not in inside_fstrings:
                texts.append((node.lineno, node.value))
        elif isinstance(node, ast.JoinedStr) and node.values and isinstance(node.values[0], ast.Constant):
            texts.append((node.lineno, str(node.values[0].value)))
    found = [(line, " ".join(m.group(0).split())) for line, text in texts if (m := STATEMENT.match(text))]
    return sorted(found)


def test_the_scan_finds_statements_however_they_are_written() -> None:
    planted = (
        '"""SELECT in a docstring is prose."""\n'
        'a = "SELECT 1"\n'
        'b = f"DELETE FROM {table} WHERE x = 1"\n'
        'c = ("INSERT INTO t"\n     " VALUES (1)")\n'
        'd = "SELECT " + ", ".join(parts)\n'
        'e = "Selected rows"  # not SQL\n'
    )
    assert inline_statements(planted) == [
        (2, "SELECT"),
        (3, "DELETE FROM"),
        (4, "INSERT INTO"),
        (6, "SELECT"),
    ]


def test_no_sql_statement_is_written_in_python() -> None:
    """docs/architecture.md §2: named, parameterised SQL, never f-strings. A statement belongs in
    warehouse_sql/queries/<domain>/ (run with load_query); a table or column that must vary is an
    ``{name:Identifier}`` parameter picked by ``identifier`` from a fixed set."""
    found = []
    for folder in SOURCES:
        for path in sorted((ROOT / folder).rglob("*.py")):
            relative = path.relative_to(ROOT).as_posix()
            if relative.startswith(ALLOWED_DIRS):
                continue
            for line, opening in inline_statements(path.read_text(encoding="utf-8")):
                if not any(relative == f and opening.startswith(o) for f, o in ALLOWED):
                    found.append(f"{relative}:{line}: {opening} …")
    assert found == [], "move these to warehouse_sql/queries/<domain>/<name>.sql:\n" + "\n".join(found)


def test_every_allowed_statement_is_still_there() -> None:
    """An allowance whose statement moved to a query file is removed with it."""
    for path, opening in ALLOWED:
        found = inline_statements((ROOT / path).read_text(encoding="utf-8"))
        assert any(words.startswith(opening) for _, words in found), (path, opening)


def test_a_result_cell_as_a_float_or_none() -> None:
    # NULL and NaN (an aggregate over no rows) are both "no value"; anything else is its float.
    assert float_or_none(None) is None and float_or_none(float("nan")) is None
    assert float_or_none(Decimal("1.25")) == 1.25 and float_or_none(3) == 3.0


def test_a_template_fills_its_slots_once_and_keeps_its_server_side_parameters() -> None:
    # feed_table has {table}, {columns} twice and {feed}; a part's own braces are never read as a slot.
    sql = fill_template(
        "issues/merges/feed_table", table="`t`", columns="`a`", feed="SELECT {x} AS a WHERE p = {p:UInt64}"
    )
    assert sql.strip() == "INSERT INTO `t` (`a`) SELECT `a` FROM (SELECT {x} AS a WHERE p = {p:UInt64})"
    with pytest.raises(KeyError, match="no part for"):
        fill_template("issues/merges/feed_table", table="`t`", columns="`a`")
