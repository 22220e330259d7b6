"""Which operator statements may reach the engine (`stacklens sql`): judged by the engine's own parser before
anything runs, never by what the engine refuses while running it.

The engine's ``readonly`` setting is no guard here: a statement it refuses in read-only mode (``DROP``,
``INSERT``, ``SYSTEM``, ``SET``) left ``readonly = 1`` on the embedded engine's session, shared with ingest,
so one refused ``DROP TABLE`` made every later insert fail until a restart. So a statement is read first:

1. ``formatQuery`` over the text as a parameter (nothing in it runs): one statement, readable, or refused —
   the parser, not a regex, finds the second statement of ``SELECT 1; SELECT 2`` past comments and strings;
2. ``EXPLAIN AST`` of the text (parses, never executes): the kind of statement (SELECT, SHOW, DESCRIBE,
   EXISTS, or EXPLAIN of one of those), every function it names (a table function that reads files or the
   network is refused by name, as a scalar of the same name such as ``file()`` is), every ``SETTINGS`` clause
   (``Set`` nodes) and ``INTO OUTFILE`` (a literal child of the statement itself).

The tree is read as the engine prints it, one node a line, indented by depth. A multi-line identifier can
add a line of its own, never remove one, so what it forges can only refuse more. Anything not understood is
refused."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from clickhouse_connect.driver.client import Client
from clickhouse_connect.driver.exceptions import ClickHouseError

from stacklens.explore.query import BadQuery
from stacklens.warehouse.queries import fill_template, load_query

READ_ONLY = "only read-only statements run here (SELECT, SHOW, DESCRIBE, EXPLAIN)"
# Table functions (and scalars of the same name) that read or write files, the network, other databases or run
# programs. Names compare case-insensitively (the engine takes `URL` and `url`); a family's variants share a
# prefix (icebergS3, deltaLakeAzure, hdfsCluster) and every *Cluster form fans out to other servers.
REFUSED_FUNCTIONS = frozenset(
    name.lower()
    for name in (
        "file", "url", "s3", "gcs", "oss", "cosn", "remote", "remoteSecure", "cluster", "clusterAllReplicas",
        "mysql", "postgresql", "sqlite", "mongodb", "redis", "jdbc", "odbc", "hdfs", "azureBlobStorage",
        "executable", "executablePool", "input", "hive", "arrowFlight", "ytsaurus",
    )
)  # fmt: skip
REFUSED_PREFIXES = ("iceberg", "deltalake", "hudi", "paimon", "s3", "hdfs", "azureblob", "remote", "mysql",
                    "postgresql", "executable", "mongodb")  # fmt: skip
READ_KINDS = ("SelectWithUnionQuery", "SelectIntersectExceptQuery", "SelectQuery", "DescribeQuery")


@dataclass(frozen=True)
class _Node:
    depth: int
    text: str

    @property
    def kind(self) -> str:
        return self.text.split(" ", 1)[0]


def check_statement(client: Client, sql: str, parameters: dict[str, Any] | None = None) -> None:
    """Refuse (:class:`BadQuery`, field ``sql``) a statement that is not one read-only statement free of
    file and network functions, ``SETTINGS`` and ``INTO OUTFILE``; the engine only parses it here.
    ``parameters``: the values its ``{name:Type}`` placeholders are bound to when it runs."""
    formatted = _formatted(client, sql)
    judge(_tree(client, sql, parameters))
    # A second look, at the formatted text's first word: a kind of statement the tree's names above did not
    # anticipate still has to start as a read does.
    words = formatted.lstrip("( \n").split(None, 1)
    if not words or words[0].upper() not in (
        "SELECT",
        "WITH",
        "SHOW",
        "DESCRIBE",
        "DESC",
        "EXPLAIN",
        "EXISTS",
    ):
        raise BadQuery("sql", READ_ONLY)


def judge(lines: list[str]) -> None:
    """Refuse the statement whose ``EXPLAIN AST`` lines are ``lines`` unless it reads and only reads the
    warehouse."""
    nodes = [_Node(len(line) - len(line.lstrip(" ")), line.strip()) for line in lines if line.strip()]
    if not nodes or nodes[0].depth != 0:
        raise BadQuery("sql", READ_ONLY)
    top = nodes[0]
    if top.kind == "Set":
        raise BadQuery("sql", "SET changes the session's settings and does not run here")
    statement = top
    options = 0  # the Set node of EXPLAIN's own options (EXPLAIN indexes = 1 SELECT …): not engine settings
    if top.kind == "Explain":
        children = [n for n in nodes[1:] if n.depth == 1]
        if children and children[0].kind == "Set":
            options = nodes.index(children[0])
            children = children[1:]
        if not children:
            raise BadQuery("sql", READ_ONLY)
        statement = children[0]
    if not (
        statement.kind in READ_KINDS
        or statement.kind.lower().startswith("show")
        or statement.kind.startswith("Exists")
    ):
        raise BadQuery("sql", READ_ONLY)
    for i, node in enumerate(nodes):
        if node.kind == "Function":
            name = node.text.split(" ", 2)[1] if " " in node.text else ""
            if refused_function(name):
                raise BadQuery(
                    "sql", f"{name}() reads files, the network or other servers and does not run here"
                )
        elif node.kind == "Set" and i != options:
            raise BadQuery("sql", "SETTINGS clauses do not run here (the server sets each query's limits)")
        elif node.kind == "Literal" and node.depth == 1:
            # A literal child of the statement itself is INTO OUTFILE's file name (or its COMPRESSION): the
            # statement's other parts (columns, FORMAT) are lists and identifiers.
            raise BadQuery("sql", "INTO OUTFILE writes a file on the server and does not run here")


def refused_function(name: str) -> bool:
    """Whether the function ``name`` reads files, the network or other servers (case-insensitive)."""
    lowered = name.lower()
    return (
        lowered in REFUSED_FUNCTIONS
        or lowered.startswith(REFUSED_PREFIXES)
        or (lowered.endswith("cluster") and lowered != "cluster")
    )


def _formatted(client: Client, sql: str) -> str:
    try:
        result = client.query(load_query("explore/statement_text"), parameters={"statement": sql})
    except ClickHouseError as exc:
        text = str(exc)
        if "Multi-statements" in text:
            raise BadQuery("sql", "one statement at a time (the text holds more than one)") from None
        raise BadQuery("sql", _first_line(text)) from None
    return str(result.result_rows[0][0]) if result.result_rows else ""


def _tree(client: Client, sql: str, parameters: dict[str, Any] | None = None) -> list[str]:
    try:
        result = client.query(
            fill_template("explore/statement_ast", statement=sql), parameters=parameters or None
        )
    except ClickHouseError as exc:
        raise BadQuery("sql", _first_line(str(exc))) from None
    return [str(row[0]) for row in result.result_rows]


def _first_line(text: str) -> str:
    lines = text.splitlines() or [""]
    return next((line for line in lines if "DB::Exception" in line), lines[0]).strip()[:500]
