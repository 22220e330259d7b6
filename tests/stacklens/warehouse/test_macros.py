"""SQL macros: written once, expanded where they stand, and invisible to the checksums of applied migrations."""

from __future__ import annotations

from pathlib import Path

import pytest

from stacklens.warehouse import macros
from stacklens.warehouse.macros import MacroError, render_macros
from stacklens.warehouse.migrations import MigrationError, discover
from stacklens.warehouse.queries import QUERIES_DIR, load_query
from stacklens.warehouse.schema_file import SCHEMA_FILE

# The SHA-256 these migrations were applied with while they still wrote the issue-elements expression out
# (git history before the macro). Databases migrated then must find them unchanged.
APPLIED_CHECKSUMS = {
    "0109_create_issue_elements_mv": "a932607108ba5fdcf8fd0e3a65fa6c3ec630c4b85e0c057d280fe965c702c3d3",
    "0120_create_issue_element_top": "de3bac9e8b55eb51a0cf6a69f82deaf9fe89437efe9850ca0aa74b54516ecf20",
    "0126_create_issue_sketches": "fb00c4e9e76d879d0293bd20d57b4179312b7ea9abae1fed96aa834027c23c03",
}
# Likewise the page-load histograms' bucket value (macro pageload_hist_value), written out eight times in 0138.
HISTOGRAM_CHECKSUMS = {
    "0138_add_pageload_facts_histograms": "65d9f744120470bca0018b5498e42d55174b45d7587620f30cd2b608be5584aa",
}
SQL_ROOT = QUERIES_DIR.parent


def written_sql() -> list[Path]:
    """The SQL files we write. warehouse_sql/schema.sql is left out: it is the engine's SHOW CREATE of every
    object (stacklens/warehouse/schema_file.py), so it holds each macro's expression expanded wherever a
    migration used it; written by a command, it cannot copy an expression by hand."""
    return [path for path in sorted(SQL_ROOT.rglob("*.sql")) if path != SCHEMA_FILE]


def test_migrations_using_the_macro_keep_their_applied_checksums() -> None:
    found = {m.name: m for m in discover() if m.name in APPLIED_CHECKSUMS}
    for name, checksum in APPLIED_CHECKSUMS.items():
        assert "${issue_elements}" in found[name].path.read_text()
        assert found[name].checksum == checksum, name


def test_the_histogram_buckets_are_written_once() -> None:
    """One bucketing per histogram, in one macro each, used by the state builders and Explore alike (Explore's
    percentiles are the views' to the last digit only while both bucket the same way)."""
    found = {m.name: m for m in discover() if m.name in HISTOGRAM_CHECKSUMS}
    for name, checksum in HISTOGRAM_CHECKSUMS.items():
        assert found[name].path.read_text().count("${pageload_hist_value}") == 8
        assert found[name].checksum == checksum, name
    for marker, macro, users in (
        (
            "exp(round(log(x) * 100) / 100)",
            "pageload_hist_value",
            ["0015_add_transactions_vital_buckets.sql", "0138_add_pageload_facts_histograms.sql"],
        ),
        (
            "round(log(duration_ms) * 100)",
            "duration_hist_key",
            ["api_calls.sql", "endpoint_call_states.sql", "resource_request_states.sql", "resources.sql"],
        ),
        (
            "exp(k / 100)",
            "duration_hist_value",
            [
                "api_calls.sql",
                "duration_p95.sql",
                "resources.sql",
                "series_api_calls.sql",
                "window_states.sql",
            ],
        ),
    ):
        holders = [str(p.relative_to(SQL_ROOT)) for p in written_sql() if marker in p.read_text()]
        assert holders == [f"macros/{macro}.sql"], marker
        assert sorted(p.name for p in written_sql() if f"${{{macro}}}" in p.read_text()) == users


def test_the_issue_elements_expression_is_written_once() -> None:
    marker = "('same_time_window', toString(toStartOfFiveMinutes(timestamp)))"
    holders = sorted(str(p.relative_to(SQL_ROOT)) for p in written_sql() if marker in p.read_text())
    assert holders == ["macros/issue_elements.sql"]
    users = sorted(
        p.name for p in written_sql() if "${issue_elements}" in p.read_text() and p.parent.name != "macros"
    )
    assert users == [
        "0109_create_issue_elements_mv.sql",
        "0120_create_issue_element_top.sql",
        "0126_create_issue_sketches.sql",
        "issue_element_arrivals_repair.sql",
        "related_sketches_full.sql",
    ]
    assert "${" not in load_query("pipelines/related_sketches_full")


def test_expansion_follows_the_indentation_and_leaves_the_runner_placeholders() -> None:
    body = macros.macros()["issue_elements"]
    assert not body.startswith("--") and body.startswith("arrayFilter(")
    text = "SELECT 1\n        ARRAY JOIN ${issue_elements} AS e\nTTL t + INTERVAL ${retention_days} DAY ${on_cluster}"
    rendered = render_macros(text)
    expected_join = "        ARRAY JOIN " + body.replace("\n", "\n        ") + " AS e"
    assert rendered.split("\n", 1)[1].rsplit("\nTTL", 1)[0] == expected_join
    assert rendered.endswith("TTL t + INTERVAL ${retention_days} DAY ${on_cluster}")
    assert render_macros("SELECT 1") == "SELECT 1"


def test_an_unknown_macro_names_the_file(tmp_path: Path) -> None:
    with pytest.raises(
        MacroError,
        match=r"queries/x.sql: unknown macro \$\{issue_element\} \(macros: dead_attempt_rows, duration_hist_key, "
        r"duration_hist_value, duration_p95, endpoint_call_states, endpoint_window, issue_elements, issue_window_rows, log_filter, pageload_bucket, "
        r"pageload_hist_value, pageload_merge, pageload_state_row, pageload_window, period_aligned, "
        r"resource_request_states, resource_row_sums, resource_window, still_landing, view_settings, written_examples, "
        r"written_facts, written_states\)",
    ):
        render_macros("ARRAY JOIN ${issue_element} AS e", "queries/x.sql")
    (tmp_path / "0001_create_things.sql").write_text("SELECT ${nope}\n")
    with pytest.raises(MigrationError, match=r"0001_create_things.sql: unknown macro \$\{nope\}"):
        discover(tmp_path)


def test_a_macro_may_use_macros_and_not_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    known = macros.macros()
    # A fill per period length aggregating like the others: the states macro inside another macro.
    monkeypatch.setitem(
        known, "minute_fill", "SELECT minute,\n    ${resource_request_states}\nFROM resource_facts"
    )
    fill = render_macros("INSERT INTO t ${minute_fill}")
    assert "${" not in fill and known["resource_request_states"].split("\n")[0] in fill
    assert fill.count("sumMap(") == 1
    monkeypatch.setitem(known, "loop", "SELECT 1\n    ${loop}")
    with pytest.raises(MacroError, match=r"macro \$\{loop\} uses itself"):
        render_macros("${loop}", "queries/y.sql")
