"""The operator's read-only SQL: one statement judged by the engine's parser, on a connection of its own, its
answer cut at the row cap; nothing it sends, refused or run, changes the shared client's session."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import pytest
from clickhouse_connect.driver.client import Client

from stacklens.explore.operator_sql import MAX_SQL_LENGTH, run_operator_sql
from stacklens.explore.query import BadQuery
from stacklens.settings import Settings
from stacklens.warehouse.client import ensure_database, get_warehouse, own_client

# Every statement the operator route refuses, and words of its refusal. Writes keep the one read-only message;
# the others name the function or clause at fault.
REFUSED: list[tuple[str, str]] = [
    ("DROP TABLE guard_probe", "only read-only statements run here"),
    ("INSERT INTO guard_probe VALUES (9)", "only read-only statements run here"),
    ("INSERT INTO guard_probe SELECT 9", "only read-only statements run here"),
    ("CREATE TABLE x (a UInt8) ENGINE = Memory", "only read-only statements run here"),
    ("ALTER TABLE guard_probe DELETE WHERE 1", "only read-only statements run here"),
    ("TRUNCATE TABLE guard_probe", "only read-only statements run here"),
    ("OPTIMIZE TABLE guard_probe FINAL", "only read-only statements run here"),
    ("SYSTEM SHUTDOWN", "only read-only statements run here"),
    ("SYSTEM DROP MARK CACHE", "only read-only statements run here"),
    ("KILL QUERY WHERE 1", "only read-only statements run here"),
    ("USE system", "only read-only statements run here"),
    ("EXPLAIN AST DROP TABLE guard_probe", "only read-only statements run here"),
    ("/* SELECT */ DROP TABLE guard_probe", "only read-only statements run here"),
    ("SET readonly = 0", "SET changes the session's settings"),
    ("SET max_threads = 1", "SET changes the session's settings"),
    ("SELECT 1 SETTINGS readonly = 0", "SETTINGS clauses do not run here"),
    ("SELECT * FROM (SELECT 1 SETTINGS max_threads = 1)", "SETTINGS clauses do not run here"),
    ("EXPLAIN SELECT 1 SETTINGS max_threads = 1", "SETTINGS clauses do not run here"),
    ("SELECT 1 INTO OUTFILE '/tmp/guard-out'", "INTO OUTFILE"),
    ("SELECT 1 INTO OUTFILE '/tmp/guard-out' APPEND", "INTO OUTFILE"),
    ("SELECT 1 INTO OUTFILE '/tmp/guard-out' TRUNCATE", "INTO OUTFILE"),
    ("SELECT 1 INTO OUTFILE '/tmp/guard-out' AND STDOUT", "INTO OUTFILE"),
    ("SELECT 1 INTO OUTFILE '/tmp/guard-out.gz' COMPRESSION 'gzip' FORMAT CSV", "INTO OUTFILE"),
    ("EXPLAIN SYNTAX SELECT 1 INTO OUTFILE '/tmp/guard-out'", "INTO OUTFILE"),
    ("SELECT 1; SELECT 2", "one statement at a time"),
    ("SELECT 1; DROP TABLE guard_probe", "one statement at a time"),
    ("SELECT * FROM file('/etc/passwd', 'LineAsString')", "file()"),
    ("SELECT file('/etc/passwd')", "file()"),
    ("SELECT * FROM FILE('/etc/passwd', 'LineAsString')", "FILE()"),
    ("DESC file('/etc/passwd', 'LineAsString')", "file()"),
    ("SELECT * FROM url('http://127.0.0.1:9/x', 'CSV')", "url()"),
    ("SELECT * FROM URL('http://127.0.0.1:9/x', 'CSV')", "URL()"),
    ("SELECT * FROM s3('http://127.0.0.1:9/b/k', 'CSV')", "s3()"),
    ("SELECT * FROM s3Cluster('c', 'http://127.0.0.1:9/b/k')", "s3Cluster()"),
    ("SELECT * FROM remote('127.0.0.1:9', system.one)", "remote()"),
    ("SELECT * FROM remoteSecure('127.0.0.1:9', system.one)", "remoteSecure()"),
    ("SELECT * FROM mysql('127.0.0.1:9', 'd', 't', 'u', 'p')", "mysql()"),
    ("SELECT * FROM postgresql('127.0.0.1:9', 'd', 't', 'u', 'p')", "postgresql()"),
    ("SELECT * FROM executable('x.sh', 'TSV', 'a String')", "executable()"),
    ("SELECT * FROM hdfs('hdfs://127.0.0.1:9/x', 'TSV')", "hdfs()"),
    ("SELECT * FROM jdbc('x', 'y')", "jdbc()"),
    ("SELECT * FROM odbc('x', 'y')", "odbc()"),
    ("SELECT * FROM azureBlobStorage('x', 'y', 'z')", "azureBlobStorage()"),
    ("SELECT * FROM input('a String')", "input()"),
    ("SELECT * FROM cluster('default', system.one)", "cluster()"),
    ("SELECT * FROM sqlite('/tmp/x.db', 't')", "sqlite()"),
    ("SELECT * FROM mongodb('127.0.0.1:9', 'd', 'c', 'u', 'p', 'a String')", "mongodb()"),
    ("SELECT * FROM redis('127.0.0.1:9', 'k', 'k String')", "redis()"),
    ("SELECT * FROM gcs('http://127.0.0.1:9/b/k')", "gcs()"),
    ("SELECT * FROM deltaLake('http://127.0.0.1:9/b/')", "deltaLake()"),
    ("SELECT * FROM iceberg('http://127.0.0.1:9/b/')", "iceberg()"),
    ("SELECT * FROM icebergS3('http://127.0.0.1:9/b/')", "icebergS3()"),
    ("SELECT * FROM hudi('http://127.0.0.1:9/b/')", "hudi()"),
    ("SELECT * FROM urlCluster('c', 'http://127.0.0.1:9/x')", "urlCluster()"),
    ("SELECT * FROM fileCluster('c', '/etc/passwd')", "fileCluster()"),
    ("SELECT 1 WHERE 1 IN (SELECT * FROM url('http://127.0.0.1:9/x', 'CSV', 'a UInt8'))", "url()"),
    ("SELECT * FROM system.one AS a JOIN file('/etc/passwd') AS b ON 1", "file()"),
    ("WITH (SELECT count() FROM file('/etc/passwd')) AS n SELECT n", "file()"),
    ("EXPLAIN SELECT * FROM url('http://127.0.0.1:9/x', 'CSV')", "url()"),
    ("SELECT nope FROM numbers(1)", "nope"),
    ("SELEC 1", "Syntax error"),
]
# Statements that run: a string, a comment or a name may say anything.
ACCEPTED: list[str] = [
    "SELECT count() AS n FROM guard_probe",
    "SELECT 'DROP TABLE guard_probe; SELECT * FROM file(''/etc/passwd'')' AS s",
    "SELECT 1 AS settings_word -- INTO OUTFILE 'x'; DROP TABLE guard_probe",
    "/* SETTINGS readonly = 0 */ SELECT 2 AS n;",
    "SELECT encodeURLComponent('a b') AS u, domain('http://x.org/') AS d, URLHash('x') AS h",
    "WITH 1 AS x SELECT x UNION ALL SELECT 2",
    "SELECT 1 INTERSECT SELECT 1",
    "SHOW TABLES",
    "SHOW DATABASES",
    "DESCRIBE TABLE guard_probe",
    "EXISTS TABLE guard_probe",
    "SHOW CREATE TABLE guard_probe",
    "EXPLAIN SELECT count() FROM guard_probe",
    "EXPLAIN indexes = 1 SELECT count() FROM guard_probe",
    "EXPLAIN AST SELECT 1",
    "SELECT name FROM system.tables WHERE database = currentDatabase() LIMIT 1",
]


@pytest.fixture
def shared(settings: Settings) -> Client:
    ensure_database(settings)
    client = get_warehouse(settings)
    client.command("CREATE TABLE IF NOT EXISTS guard_probe (a UInt8) ENGINE = MergeTree ORDER BY a")
    return client


@pytest.fixture
def connect(settings: Settings, shared: Client) -> Callable[[], Client]:
    return partial(own_client, settings.resolved_warehouse_url, settings.warehouse_database)


def _shared_still_writes(shared: Client) -> None:
    """The shared client's session is untouched: not read-only, and an insert lands."""
    assert shared.query("SELECT getSetting('readonly')").result_rows == [(0,)]
    before = shared.query("SELECT count() FROM guard_probe").result_rows[0][0]
    shared.command("INSERT INTO guard_probe VALUES (1)")
    assert shared.query("SELECT count() FROM guard_probe").result_rows[0][0] == before + 1


def test_a_read_runs_and_answers_rows(connect) -> None:
    result = run_operator_sql(connect, "SELECT number AS n, toString(number) AS s FROM numbers(3);")
    assert result.as_json()["columns"] == ["n", "s"]
    assert result.as_json()["rows"] == [{"n": 0, "s": "0"}, {"n": 1, "s": "1"}, {"n": 2, "s": "2"}]


@pytest.mark.parametrize(("sql", "says"), REFUSED)
def test_refused_statements_name_the_sql_field_and_leave_the_shared_session_alone(
    connect, shared: Client, sql: str, says: str
) -> None:
    with pytest.raises(BadQuery, match=f"^sql: .*{_escaped(says)}") as refused:
        run_operator_sql(connect, sql)
    assert refused.value.field == "sql"
    assert shared.query("EXISTS TABLE guard_probe").result_rows == [(1,)]
    _shared_still_writes(shared)


@pytest.mark.parametrize("sql", ACCEPTED)
def test_accepted_statements_run_and_leave_the_shared_session_alone(
    connect, shared: Client, sql: str
) -> None:
    run_operator_sql(connect, sql)
    _shared_still_writes(shared)


@pytest.mark.parametrize(
    ("sql", "says"),
    [("", "give one read-only statement"), (None, "give one read-only statement"),
     ("SELECT 1" + " " * MAX_SQL_LENGTH, "at most 100,000 characters")],
)  # fmt: skip
def test_empty_and_long_statements_are_refused_before_a_connection(sql: object, says: str) -> None:
    def connect() -> Client:
        raise AssertionError("no connection for a statement refused by its shape")

    with pytest.raises(BadQuery, match=says):
        run_operator_sql(connect, sql)


def _escaped(text: str) -> str:
    import re

    return re.escape(text)
