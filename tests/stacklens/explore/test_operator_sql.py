"""The operator's read-only SQL: one statement, read-only, its answer cut at the row cap."""

from __future__ import annotations

import pytest

from stacklens.explore.operator_sql import MAX_SQL_LENGTH, run_operator_sql
from stacklens.explore.query import BadQuery
from stacklens.settings import Settings
from stacklens.warehouse.client import ensure_database, get_warehouse


@pytest.fixture
def client(settings: Settings):
    ensure_database(settings)
    return get_warehouse(settings)


def test_a_read_runs_and_answers_rows(client) -> None:
    result = run_operator_sql(client, "SELECT number AS n, toString(number) AS s FROM numbers(3);")
    assert result.as_json()["columns"] == ["n", "s"]
    assert result.as_json()["rows"] == [{"n": 0, "s": "0"}, {"n": 1, "s": "1"}, {"n": 2, "s": "2"}]


@pytest.mark.parametrize(
    ("sql", "says"),
    [
        ("", "give one read-only statement"),
        (None, "give one read-only statement"),
        ("SELECT 1" + " " * MAX_SQL_LENGTH, "at most 100,000 characters"),
        ("CREATE TABLE x (a UInt8) ENGINE = Memory", "only read-only statements run here"),
        ("SELECT nope FROM numbers(1)", "nope"),
    ],
)
def test_refused_statements_name_the_sql_field(client, sql: object, says: str) -> None:
    with pytest.raises(BadQuery, match=says) as refused:
        run_operator_sql(client, sql)
    assert refused.value.field == "sql"
