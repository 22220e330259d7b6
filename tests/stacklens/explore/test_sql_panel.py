"""An organization's SQL, the parts decided before the engine: the statement's text and parameters checked
(the field named), the organization's filter on every documented table, a dashboard's ``$name`` variables
bound as parameters (never pasted), the window's parameters, and where a syntax error stopped the parser.
The engine's side (refusals, isolation, budgets) is tested through the API (tests/api/routers/test_sql.py)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from stacklens.explore.query import BadQuery
from stacklens.explore.sql_panel import (
    TABLES,
    SqlRefused,
    check_params,
    check_sql_text,
    table_filters,
    window_params,
    with_variables,
)


def test_the_text_is_one_trimmed_statement_or_a_bad_field() -> None:
    assert check_sql_text("  SELECT 1;  ") == "SELECT 1"
    for bad in ("", "   ", None, 7):
        with pytest.raises(BadQuery, match=r"^sql: give one read-only statement"):
            check_sql_text(bad)
    with pytest.raises(BadQuery, match=r"^widgets\[2\]\.sql: at most"):
        check_sql_text("SELECT 1 " + "x" * 100_001, "widgets[2].sql")


def test_parameters_are_named_scalars() -> None:
    assert check_params(None) == {}
    assert check_params({"release": "1.4.0", "n": 3, "f": 0.5, "b": True, "z": None}) == {
        "release": "1.4.0", "n": 3, "f": 0.5, "b": True, "z": None,
    }  # fmt: skip
    with pytest.raises(BadQuery, match=r"^params: must be an object"):
        check_params(["x"])
    with pytest.raises(BadQuery, match=r"^params: 'a-b' is no parameter name"):
        check_params({"a-b": 1})
    with pytest.raises(BadQuery, match=r"^params\.x: must be a string"):
        check_params({"x": [1]})


def test_every_documented_table_is_filtered_to_the_organization() -> None:
    text = table_filters(42)
    for table in TABLES:
        assert f"'{table}': 'org_id = 42'" in text
    assert text.startswith("{") and text.endswith("}")


def test_variables_become_bound_parameters_and_other_dollars_stay() -> None:
    sql, bound = with_variables(
        "SELECT count() FROM pageload_facts WHERE page = $page AND x = '$other'", {"page": "/cart'; DROP"}
    )
    assert sql == "SELECT count() FROM pageload_facts WHERE page = {page:String} AND x = '$other'"
    assert bound == {"page": "/cart'; DROP"}


def test_the_window_parameters_are_whole_minutes_of_the_range() -> None:
    now = datetime(2026, 11, 28, 12, 34, 56, tzinfo=UTC)
    params = window_params({"range": "7d", "environment": "production"}, now)
    assert params == {
        "since": "2026-11-21 12:34:00",
        "until": "2026-11-28 12:34:00",
        "environment": "production",
        "release": "",
    }


def test_a_syntax_error_keeps_where_the_parser_stopped() -> None:
    refused = SqlRefused(
        "Code: 62. DB::Exception: Syntax error: failed at position 14 (FROM) (line 2, col 1): FROM x."
    )
    assert (refused.position, refused.line, refused.col) == (14, 2, 1)
    assert refused.message.startswith("Code: 62.") and refused.field == "sql"
    plain = SqlRefused("only SELECT statements run here")
    assert (plain.position, plain.line, plain.col) == (None, None, None)
