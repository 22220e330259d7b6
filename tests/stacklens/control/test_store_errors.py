"""Which control-store errors are "unavailable" (503) and which stay bugs (500), on a real SQLite store."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.exc import OperationalError

from stacklens.control.store_errors import ControlStoreUnavailable, as_unavailable, store_unavailable


def _error(engine_url: str, sql: str) -> OperationalError:
    engine = create_engine(engine_url, connect_args={"timeout": 0.1})
    try:
        with engine.begin() as connection, pytest.raises(OperationalError) as caught:
            connection.execute(text(sql))
        return caught.value
    finally:
        engine.dispose()


def test_a_locked_store_is_unavailable_and_a_bad_statement_is_not(tmp_path: Path) -> None:
    path = tmp_path / "control.db"
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("CREATE TABLE t (x INTEGER)")
    holder.execute("BEGIN EXCLUSIVE")
    try:
        locked = _error(f"sqlite:///{path}", "INSERT INTO t VALUES (1)")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert store_unavailable(locked)
    refusal = as_unavailable(locked)
    assert isinstance(refusal, ControlStoreUnavailable)
    assert "database is locked" in str(refusal) and "INSERT" not in str(refusal), "no statement in the answer"

    missing_table = _error(f"sqlite:///{path}", "SELECT * FROM no_such_table")
    assert not store_unavailable(missing_table)
    assert not store_unavailable(ValueError("database is locked"))
