"""Every performance view read runs without JIT compilation (macro view_settings): the engine compiles an
expression on the third call with the same constants, and that call of a view took 100–350 ms more."""

from __future__ import annotations

from typing import Any

from stacklens.warehouse.macros import macros
from stacklens.warehouse.queries import QUERIES_DIR, load_query


def test_every_performance_query_ends_with_the_view_settings() -> None:
    names = sorted(p.stem for p in (QUERIES_DIR / "performance").glob("*.sql"))
    assert len(names) >= 20
    setting = macros()["view_settings"]
    for name in names:
        text = load_query(f"performance/{name}").rstrip()
        last = text.rsplit("\n", 1)[-1]
        assert last.startswith("SETTINGS ") and last.endswith(setting), (name, last)


def test_the_engine_applies_them_to_the_query(client: Any) -> None:
    setting = macros()["view_settings"]
    row = client.query(
        "SELECT getSetting('compile_expressions'), getSetting('compile_aggregate_expressions'), "
        f"getSetting('join_use_nulls') SETTINGS join_use_nulls = 0, {setting}"
    ).result_rows[0]
    assert [bool(row[0]), bool(row[1]), int(row[2])] == [False, False, 0]
    default = client.query("SELECT getSetting('compile_expressions')").result_rows[0]
    assert bool(default[0]) is True  # the session itself keeps the engine's default (pipelines keep JIT)
