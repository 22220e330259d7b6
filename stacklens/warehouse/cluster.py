"""Render migration statements for a replicated, sharded ClickHouse cluster (``STACKLENS_WAREHOUSE_CLUSTER``).

Migration files are written once, for a single server; with a cluster set, the runner renders each statement
by its role instead of rewriting the files (their checksums never depend on the deployment):

* ``CREATE TABLE t … ENGINE = <X>MergeTree(args)`` becomes two statements: the data table ``t_local`` with
  ``Replicated<X>MergeTree('/clickhouse/tables/{shard}/{database}/{table}', '{replica}', args)`` on every
  replica, and ``t`` itself as a ``Distributed`` table in front of it, so every query and insert of the code
  base keeps the name it has today. The sharding key is ``cityHash64`` of the first two columns of the sort
  key that are not dates or times (``events``: project and fingerprint, so an issue's events and the
  aggregates materialized from them live on one shard; ``transactions``: project and event id). A subset of
  the sort key keeps rows that Replacing/Aggregating merges must meet on one shard. A statement may choose its
  own key with a comment line ``-- cluster-shard-key: <expression>`` above it.
* ``CREATE MATERIALIZED VIEW … TO t AS SELECT … FROM s`` reads ``s_local`` and writes ``t_local``: a view
  fires on the insert into the data table of each shard and writes beside it.
* ``ALTER TABLE t`` goes to ``t_local``; its column commands (add, drop, modify, rename, comment) go to ``t``
  as well (the Distributed table mirrors the columns). ``DROP TABLE t`` drops both, the data table ``SYNC`` so
  that a table re-created at once gets its replication path back. ``TRUNCATE``/``OPTIMIZE``/``DELETE FROM`` go
  to ``t_local``.
* Everything else (``INSERT … SELECT`` backfills, plain views) runs as written, against the Distributed
  names, with ``ON CLUSTER`` where the statement is DDL.

Without a cluster nothing here runs: embedded and single-server installs get the files' text unchanged.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

LOCAL_SUFFIX = "_local"
REPLICATION_PATH = "/clickhouse/tables/{shard}/{database}/{table}"
REPLICA_NAME = "{replica}"
SHARD_KEY_MARKER = re.compile(r"^\s*--\s*cluster-shard-key:\s*(.+?)\s*$", re.MULTILINE)

_NAME = r"(?:`[^`]+`|[A-Za-z_][A-Za-z0-9_]*)"
_COMMENTS = r"(?:\s*--[^\n]*\n)*\s*"
# The head of a DDL statement up to the object's name, after any leading comment lines; ON CLUSTER follows it.
_DDL_HEAD = re.compile(
    rf"""^{_COMMENTS}
    (?:CREATE\s+(?:OR\s+REPLACE\s+)?
        (?:TABLE|(?:MATERIALIZED\s+)?VIEW|DICTIONARY|DATABASE)(?:\s+IF\s+NOT\s+EXISTS)?
      |ALTER\s+TABLE
      |DROP\s+(?:TABLE|VIEW|DICTIONARY|DATABASE)(?:\s+IF\s+EXISTS)?)
    \s+{_NAME}(?:\.{_NAME})?""",
    re.IGNORECASE | re.VERBOSE,
)
_CLUSTER_NAME = re.compile(r"^[A-Za-z0-9_.{}-]{1,128}$")
_CREATE_TABLE = re.compile(
    rf"^(?P<head>{_COMMENTS}CREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?)(?P<name>[A-Za-z_][A-Za-z0-9_]*)\b",
    re.IGNORECASE,
)
_ENGINE = re.compile(
    r"\bENGINE\s*=\s*(?P<kind>(?:Replacing|Aggregating|Summing|Collapsing|VersionedCollapsing|Graphite)?MergeTree)\b",
    re.IGNORECASE,
)
_MV = re.compile(rf"^{_COMMENTS}CREATE\s+MATERIALIZED\s+VIEW\b", re.IGNORECASE)
_MV_TO = re.compile(r"\bTO\s+(?P<name>[A-Za-z_][A-Za-z0-9_]*)\b(?=\s*(?:\(|AS\b))", re.IGNORECASE)
_FROM = re.compile(r"\bFROM\s+(?P<name>[A-Za-z_][A-Za-z0-9_]*)\b", re.IGNORECASE)
_ALTER = re.compile(
    rf"^(?P<head>{_COMMENTS}ALTER\s+TABLE\s+)(?P<name>[A-Za-z_][A-Za-z0-9_]*)\b", re.IGNORECASE
)
_COLUMN_COMMAND = re.compile(r"^(?:ADD|DROP|MODIFY|RENAME|COMMENT)\s+COLUMN\b", re.IGNORECASE)
_DROP_TABLE = re.compile(
    rf"^(?P<head>{_COMMENTS}DROP\s+TABLE\s+(?:IF\s+EXISTS\s+)?)(?P<name>[A-Za-z_][A-Za-z0-9_]*)\b(?P<rest>.*)$",
    re.IGNORECASE | re.DOTALL,
)
_LOCAL_ONLY = re.compile(
    rf"^(?P<head>{_COMMENTS}(?:TRUNCATE\s+TABLE\s+(?:IF\s+EXISTS\s+)?|OPTIMIZE\s+TABLE\s+|DELETE\s+FROM\s+))"
    r"(?P<name>[A-Za-z_][A-Za-z0-9_]*)\b",
    re.IGNORECASE,
)
_ORDER_BY = re.compile(r"^\s*ORDER\s+BY\s+(.+?)\s*;?\s*$", re.IGNORECASE | re.MULTILINE)
_COLUMN = re.compile(r"^\s+([A-Za-z_][A-Za-z0-9_]*)\s+([A-Za-z][A-Za-z0-9_]*)", re.MULTILINE)
_TIME_TYPES = ("date", "datetime", "nullable")  # Nullable cannot be a sharding input worth having either


class ClusterDDLError(ValueError):
    """A statement or a cluster name cannot be rendered for a cluster; the message says why."""


@dataclass(frozen=True)
class ClusterLayout:
    """What rendering needs: the cluster, the database, and which tables hold data (MergeTree family)."""

    cluster: str
    database: str
    replicated: frozenset[str]

    def local(self, name: str) -> str:
        return name + LOCAL_SUFFIX


def cluster_clause(cluster: str | None) -> str:
    """`` ON CLUSTER '<name>'``, or ``""`` without a cluster; a name outside ``[A-Za-z0-9_.{}-]`` is
    refused."""
    if not cluster:
        return ""
    if not _CLUSTER_NAME.match(cluster):
        raise ClusterDDLError(
            f"STACKLENS_WAREHOUSE_CLUSTER {cluster!r} is not a cluster name (letters, digits, _ . - and {{macros}})"
        )
    return f" ON CLUSTER '{cluster}'"


def with_cluster(statement: str, cluster: str | None, placeholder: str = "${on_cluster}") -> str:
    """One statement made cluster-wide: ``ON CLUSTER`` right after the object's name (or where the statement
    writes ``${on_cluster}``); unchanged without a cluster or when the statement names a cluster itself."""
    clause = cluster_clause(cluster)
    if placeholder in statement:
        return statement.replace(placeholder, clause.strip())
    head = _DDL_HEAD.match(statement)
    if not clause or head is None or re.search(r"\bON\s+CLUSTER\b", statement, re.IGNORECASE):
        return statement
    return statement[: head.end()] + clause + statement[head.end() :]


def data_tables(statements: list[str]) -> frozenset[str]:
    """Names created with a MergeTree-family engine by any of ``statements`` (the tables that get
    replicas)."""
    names = set()
    for statement in statements:
        create = _CREATE_TABLE.match(statement)
        if create and _ENGINE.search(statement):
            names.add(create.group("name"))
    return frozenset(names)


def render(statement: str, layout: ClusterLayout) -> list[str]:
    """The statements that carry out ``statement`` on the cluster, in order (see the module docstring)."""
    create = _CREATE_TABLE.match(statement)
    if create and _ENGINE.search(statement):
        return _render_table(statement, create, layout)
    if _MV.match(statement):
        return [with_cluster(_render_view(statement, layout), layout.cluster)]
    alter = _ALTER.match(statement)
    if alter and alter.group("name") in layout.replicated:
        return _render_alter(statement, alter, layout)
    drop = _DROP_TABLE.match(statement)
    if drop and drop.group("name") in layout.replicated:
        local = f"{drop.group('head')}{layout.local(drop.group('name'))}{cluster_clause(layout.cluster)}"
        return [with_cluster(statement, layout.cluster), f"{local}{drop.group('rest').rstrip()} SYNC"]
    only = _LOCAL_ONLY.match(statement)
    if only and only.group("name") in layout.replicated:
        name = layout.local(only.group("name"))
        return [f"{only.group('head')}{name}{cluster_clause(layout.cluster)}{statement[only.end() :]}"]
    return [with_cluster(statement, layout.cluster)]


def in_place(statement: str, cluster: str | None) -> str:
    """A statement that changes stored rows in place (``DELETE FROM``, ``TRUNCATE``, ``OPTIMIZE``), as this
    deployment runs it: as written without a cluster; on a cluster against the data table of every node, since
    a Distributed table holds no rows (the pipelines' lightweight deletes)."""
    only = _LOCAL_ONLY.match(statement)
    if not cluster or only is None:
        return statement
    name = only.group("name") + LOCAL_SUFFIX
    return f"{only.group('head')}{name}{cluster_clause(cluster)}{statement[only.end() :]}"


def shard_key(statement: str) -> str:
    """The Distributed table's sharding expression for one ``CREATE TABLE`` (module docstring)."""
    marker = SHARD_KEY_MARKER.search(statement)
    if marker:
        return marker.group(1)
    order = _ORDER_BY.search(statement)
    if order is None:
        return "rand()"
    engine = _ENGINE.search(statement)
    columns_text = statement[: engine.start()] if engine else statement
    types = {name: kind.lower() for name, kind in _COLUMN.findall(columns_text)}
    columns = [c.strip() for c in order.group(1).strip().strip("()").split(",")]
    chosen = [c for c in columns if c in types and not types[c].startswith(_TIME_TYPES)][:2]
    return f"cityHash64({', '.join(chosen)})" if chosen else "rand()"


def _render_table(statement: str, create: re.Match[str], layout: ClusterLayout) -> list[str]:
    name = create.group("name")
    local = f"{create.group('head')}{layout.local(name)}{statement[create.end() :]}"
    engine = _ENGINE.search(local)
    assert engine is not None  # the caller matched it on the same text
    args, end = _engine_args(local, engine.end())
    replicated = [f"'{REPLICATION_PATH}'", f"'{REPLICA_NAME}'", *([args] if args.strip() else [])]
    local = f"{local[: engine.start()]}ENGINE = Replicated{engine.group('kind')}({', '.join(replicated)}){local[end:]}"
    distributed = (
        f"CREATE TABLE IF NOT EXISTS {name}{cluster_clause(layout.cluster)} AS {layout.database}.{layout.local(name)}\n"
        f"ENGINE = Distributed('{layout.cluster}', '{layout.database}', '{layout.local(name)}', "
        f"{shard_key(statement)})"
    )
    return [with_cluster(local, layout.cluster), distributed]


def _engine_args(text: str, start: int) -> tuple[str, int]:
    """The engine's argument text (balanced parentheses) and where the engine clause ends."""
    rest = text[start:]
    stripped = rest.lstrip(" ")
    if not stripped.startswith("("):
        return "", start
    offset = start + len(rest) - len(stripped)
    depth = 0
    for index, char in enumerate(text[offset:], offset):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth == 0:
            return text[offset + 1 : index], index + 1
    raise ClusterDDLError(f"unbalanced parentheses in the ENGINE clause: {text[start - 40 : start + 40]!r}")


def _render_view(statement: str, layout: ClusterLayout) -> str:
    target = _MV_TO.search(statement)
    if target and target.group("name") in layout.replicated:
        statement = f"{statement[: target.start('name')]}{layout.local(target.group('name'))}{statement[target.end('name') :]}"
    body_start = re.search(r"\bAS\s+(?:\(\s*)?SELECT\b|\bAS\s+WITH\b", statement, re.IGNORECASE)
    source = _FROM.search(statement, body_start.start() if body_start else 0)
    if source and source.group("name") in layout.replicated:
        statement = f"{statement[: source.start('name')]}{layout.local(source.group('name'))}{statement[source.end('name') :]}"
    engine = _ENGINE.search(statement)
    if engine and not target:  # a view with its own storage: replicate that too
        args, end = _engine_args(statement, engine.end())
        parts = [f"'{REPLICATION_PATH}'", f"'{REPLICA_NAME}'", *([args] if args.strip() else [])]
        statement = f"{statement[: engine.start()]}ENGINE = Replicated{engine.group('kind')}({', '.join(parts)}){statement[end:]}"
    return statement


def _render_alter(statement: str, alter: re.Match[str], layout: ClusterLayout) -> list[str]:
    name = alter.group("name")
    rest = statement[alter.end() :]
    local = with_cluster(f"{alter.group('head')}{layout.local(name)}{rest}", layout.cluster)
    # The Distributed table mirrors the columns: it gets the column commands of the statement, and nothing
    # else (it has no TTL, settings, indexes, projections or rows to mutate).
    columns = [c for c in _commands(rest) if _COLUMN_COMMAND.match(c)]
    if not columns:
        return [local]
    distributed = f"{alter.group('head')}{name} " + ", ".join(columns)
    return [local, with_cluster(distributed, layout.cluster)]


def _commands(text: str) -> list[str]:
    """The comma-separated commands of an ALTER (commas inside parentheses or quotes do not separate)."""
    text = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("--"))
    commands, depth, quote, start = [], 0, "", 0
    for index, char in enumerate(text):
        if quote:
            quote = "" if char == quote and text[index - 1] != "\\" else quote
        elif char in "'`\"":
            quote = char
        elif char in "([":
            depth += 1
        elif char in ")]":
            depth -= 1
        elif char == "," and depth == 0:
            commands.append(text[start:index].strip())
            start = index + 1
    commands.append(text[start:].strip())
    return [c for c in commands if c]
