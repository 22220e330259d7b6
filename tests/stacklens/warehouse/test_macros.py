"""SQL macros: written once, expanded where they stand, and invisible to the checksums of applied
migrations."""

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
# Likewise the page-load histograms' bucket value (macro pageload_hist_value), written out eight times in
# 0138.
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
            [
                "0015_add_transactions_vital_buckets.sql",
                "0138_add_pageload_facts_histograms.sql",
                "0320_pageload_own_inp.sql",
                "inp_hist_value.sql",
            ],
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


def test_the_period_tiling_is_written_once() -> None:
    """The periods that tile a window, and those that tile a series of windows with the points each counts
    for, are each one macro: the views, the budgets' and alert rules' windows and their series read the
    same periods."""
    for marker, macro, users in (
        (
            "(grain, start) IN {periods:Array(Tuple(String, DateTime('UTC')))}\nAND start >=",
            "period_tiles",
            ["endpoint_window.sql", "pageload_window.sql", "resource_window.sql", "window_states.sql"],
        ),
        (
            "toStartOfHour(start) IN {minute_hours:",
            "series_periods",
            ["series_api_calls.sql", "series_pageloads.sql"],
        ),
        (
            "{members:Array(Array(UInt16))}[indexOf(",
            "series_points",
            ["series_api_calls.sql", "series_pageloads.sql"],
        ),
    ):
        holders = [str(p.relative_to(SQL_ROOT)) for p in written_sql() if marker in _unindented(p)]
        assert holders == [f"macros/{macro}.sql"], marker
        used = [p.name for p in written_sql() if f"${{{macro}}}" in p.read_text() and p.stem != macro]
        assert sorted(used) == users
    # A window's bounds on `start` are the tiling's: no query names them beside the periods itself — but an
    # anomaly rule's crash-free series, reading the hour rows one by one (a series of hours, not a window).
    bounds = "AND start >= {since:"
    assert [str(p.relative_to(SQL_ROOT)) for p in written_sql() if bounds in p.read_text()] == [
        "macros/period_tiles.sql",
        "macros/series_periods.sql",
        "queries/anomalies/crash_free_hourly.sql",
    ]


def test_the_minute_and_hour_periods_are_written_once() -> None:
    """Per kind, the minutes and the hours of its periods are one statement (a macro taking the grain), so
    the two grains a window's edges and middle are read from cannot be built differently."""
    for kind in ("pageload", "endpoint_call", "resource_request"):
        macro = f"{kind}_periods_of_facts"
        holders = [p.name for p in written_sql() if f"INSERT INTO {kind}_periods\n" in p.read_text()]
        assert f"{macro}.sql" in holders and f"{kind}_periods_minute.sql" not in holders
        for grain in ("minute", "hour"):
            text = (QUERIES_DIR / "pipelines" / f"{kind}_periods_{grain}.sql").read_text()
            assert f"${{{macro}(grain={grain})}}" in text
            rendered = load_query(f"pipelines/{kind}_periods_{grain}")
            assert (
                f"'{grain}' AS grain, toStartOfInterval(" in rendered
                and f"INTERVAL 1 {grain}) AS {grain}" in rendered
            )
            assert "${" not in rendered


def test_the_days_and_blocks_merge_the_same_periods_for_every_kind() -> None:
    """The hours a step merges into days, the days into blocks and a block's grain and start are one macro
    each, used by every kind's day and block queries."""
    kinds = ("endpoint_call", "pageload", "resource_request", "session")
    for marker, macro, users in (
        (
            "toStartOfDay({end:DateTime64(3, 'UTC')} - INTERVAL 1 MILLISECOND) + INTERVAL 1 DAY",
            "hours_of_days",
            sorted(
                [f"{k}_periods_day.sql" for k in kinds]
                + ["pageload_examples_day.sql", "inp_periods_day.sql", "inp_script_periods_day.sql"]
            ),
        ),
        ("ARRAY JOIN [2, 4, 8, 16] AS s", "days_of_blocks", [f"{k}_periods_blocks.sql" for k in kinds]),
        (
            "intDiv(toUInt32(toDate(start)), s) * s",
            "block_period",
            [f"{k}_periods_blocks.sql" for k in kinds],
        ),
    ):
        holders = [str(p.relative_to(SQL_ROOT)) for p in written_sql() if marker in p.read_text()]
        assert holders == [f"macros/{macro}.sql"], marker
        used = [p.name for p in written_sql() if f"${{{macro}}}" in p.read_text() and p.stem != macro]
        assert sorted(used) == users


def _unindented(path: Path) -> str:
    """A file's text with each line's indentation removed: a marker spanning lines matches however it is
    indented."""
    return "\n".join(line.strip() for line in path.read_text().split("\n"))


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
        match=r"queries/x.sql: unknown macro \$\{issue_element\} \(macros: block_period, days_of_blocks, "
        r"dead_attempt_rows, duration_hist_key, duration_hist_value, duration_p95, endpoint_call_periods_of_facts, endpoint_call_states, endpoint_window, "
        r"hours_of_days, inp_bucket_entry, inp_hist_value, inp_merge, inp_state_row, inp_window, issue_elements, issue_title, issue_window_rows, log_filter, pageload_bucket, pageload_hist_value, pageload_merge, "
        r"pageload_periods_of_facts, pageload_state_row, pageload_window, period_aligned, period_tiles, "
        r"resource_request_periods_of_facts, resource_request_states, resource_row_sums, resource_window, "
        r"series_periods, series_points, still_landing, trace_span_match, view_settings, written_examples, written_facts, "
        r"written_states\)",
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


def test_a_macro_takes_arguments_of_one_word(monkeypatch: pytest.MonkeyPatch) -> None:
    known = macros.macros()
    monkeypatch.setitem(
        known, "per_grain", "SELECT '${grain}' AS grain,\n    toStartOfInterval(ts, INTERVAL 1 ${grain})"
    )
    assert render_macros("  ${per_grain(grain=hour)}") == (
        "  SELECT 'hour' AS grain,\n      toStartOfInterval(ts, INTERVAL 1 hour)"
    )
    with pytest.raises(
        MacroError, match=r"queries/z.sql: macro \$\{per_grain\} has a malformed argument 'grain=1 h'"
    ):
        render_macros("${per_grain(grain=1 h)}", "queries/z.sql")
    with pytest.raises(MacroError, match=r"macro \$\{per_grain\} takes no argument unit"):
        render_macros("${per_grain(grain=hour, unit=minute)}", "queries/z.sql")
    # Without its argument the macro's placeholder is unknown: an argument is bound only where it is given.
    with pytest.raises(MacroError, match=r"macro per_grain: unknown macro \$\{grain\}"):
        render_macros("${per_grain}", "queries/z.sql")
