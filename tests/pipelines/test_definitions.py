"""The workspace loads and validates with the Dagster CLI, and the definitions hold what the docs promise."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from pipelines.definitions import defs
from pipelines.schedules import SCHEDULE_CRONS
from stacklens.settings import Settings
from stacklens.warehouse.migrations import discover
from stacklens.warehouse.queries import QUERIES_DIR, load_query

ROOT = Path(__file__).resolve().parents[2]
# A table named after FROM or JOIN (upper case: SQL as the code writes it; Python's `from` is lower case).
READ = re.compile(r"\b(?:FROM|JOIN)\s+([a-z_][a-z0-9_]*)\b")
WRITE = re.compile(r"\bINSERT\s+INTO\s+([a-z_][a-z0-9_]*)\b")
# What the pages, the API, budgets and alerts read: the performance views' queries and macros, the alerts'
# queries and the budgets' status reads.
READER_QUERIES = ("performance", "alerts", "budgets")


def test_dagster_definitions_validate(tmp_path: Path) -> None:
    home = tmp_path / "dagster"
    home.mkdir()
    env = {
        **os.environ,
        "DAGSTER_HOME": str(home),
        "STACKLENS_WAREHOUSE_URL": f"chdb://{tmp_path / 'warehouse'}",
        "STACKLENS_WAREHOUSE_DATABASE": "validate",
        "STACKLENS_DATABASE_URL": f"sqlite:///{tmp_path / 'control.db'}",
        "STACKLENS_DATA_DIR": str(tmp_path),
    }
    dagster = Path(sys.executable).with_name("dagster")
    proc = subprocess.run(
        [str(dagster), "definitions", "validate", "-w", "workspace.yaml"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "All code locations passed validation" in proc.stdout + proc.stderr


def test_assets_grouped_documented_and_scheduled() -> None:
    specs = {spec.key.to_user_string(): spec for spec in defs.resolve_all_asset_specs()}
    # What no run builds (raw rows, insert-time states, workflow tables) is in the graph as specs of its own
    # groups (tests/pipelines/assets/test_live_tables.py); the marts are the rest.
    live = {"raw", "insert_time", "workflow"}
    marts = {k: s for k, s in specs.items() if s.group_name not in live}
    assert all(k.startswith("raw/") for k, s in specs.items() if s.group_name == "raw")
    assert all(
        s.description and len(s.description) > 60 for s in specs.values() if s.group_name in live - {"raw"}
    )
    assert set(marts) == {
        "issues",
        "related_issues",
        "pageload_facts",
        "pageload_periods",
        "pageload_examples",
        "resource_facts",
        "resource_request_periods",
        "endpoint_facts",
        "endpoint_call_periods",
        "inp_interactions",  # INP causes (issue 69), and its hour and day states
        "inp_periods",
        "inp_script_periods",
        "budget_status",
        "anomaly_bands",
        "alert_evaluations",
        "alert_deliveries",
        "issue_owners",
        "person_digests",
        "scheduled_reports",
        "tracker_ticket_states",
        "session_periods",
        "monitor_detection",
        "monitor_checks",
    }
    assert {s.group_name for s in marts.values()} == {
        "issues",
        "performance",
        "releases",  # session_periods: release health
        "budgets",
        "alerts",
        "integrations",
        "monitors",
    }
    assert all(s.description and len(s.description) > 60 for s in marts.values())
    assert {s.name: s.cron_schedule for s in defs.schedules} == {n: c for n, (c, _) in SCHEDULE_CRONS.items()}


def test_loading_reads_neither_the_control_store_nor_the_environment(tmp_path: Path) -> None:
    """A control store holding budgets, named by the environment, does not change what loads: the code
    location is the same whatever the databases hold (each budget's verdict is a row of budget_status)."""
    from stacklens.control.accounts import create_organization
    from stacklens.control.budgets import set_budget
    from stacklens.control.db import dispose_engines, migrate_control_store, session_scope
    from stacklens.control.projects import create_project
    from tests.conftest import TEST_SECRET

    settings = Settings(data_dir=tmp_path, secret_key=TEST_SECRET)
    migrate_control_store(settings)
    with session_scope(settings) as session:
        org, _ = create_organization(session, "Budgeted", "owner@example.test", "password-123")
        project, _ = create_project(session, org.id, "Web")
        set_budget(session, project, "lcp_ms", "*", 2500)
    dispose_engines()
    env = {k: v for k, v in os.environ.items() if not k.startswith("STACKLENS_")}
    env.update(
        PYTHONPATH=str(ROOT),
        STACKLENS_DATA_DIR=str(tmp_path),
        STACKLENS_DATABASE_URL=settings.resolved_database_url,
    )
    code = (
        "import pipelines.definitions as d;"
        "print(sorted(k.to_user_string() for k in d.defs.resolve_asset_graph().asset_check_keys"
        " if k.asset_key.to_user_string() == 'budget_status'))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=180
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "['budget_status:budgets_evaluated']"


def _warehouse_tables() -> set[str]:
    """The tables the migrations leave behind (created, not dropped later)."""
    tables: set[str] = set()
    for migration in discover():
        for statement in migration.split(30):
            code = "\n".join(line for line in statement.splitlines() if not line.lstrip().startswith("--"))
            if created := re.match(r"\s*CREATE TABLE IF NOT EXISTS (\w+)", code):
                tables.add(created.group(1))
            elif dropped := re.match(r"\s*DROP TABLE IF EXISTS (\w+)", code):
                tables.discard(dropped.group(1))
    return tables


def _query_reads(folder: str) -> dict[str, set[str]]:
    """Per named query of ``queries/<folder>``: the tables it reads besides the one it writes (macros
    expanded, comments removed, as the warehouse gets it)."""
    out = {}
    for path in sorted((QUERIES_DIR / folder).glob("*.sql")):
        text = load_query(f"{folder}/{path.stem}")
        out[f"{folder}/{path.stem}"] = set(READ.findall(text)) - set(WRITE.findall(text))
    return out


def _code_reads(folder: str) -> set[str]:
    return {name for path in (ROOT / folder).rglob("*.py") for name in READ.findall(path.read_text())}


def _asset_tables() -> dict[str, str]:
    """Asset key -> the table of the same name (the raw assets `raw/<table>`), for the assets that are
    tables."""
    tables = _warehouse_tables()
    keys = {spec.key.to_user_string(): spec.key.path[-1] for spec in defs.resolve_all_asset_specs()}
    return {key: name for key, name in keys.items() if name in tables}


def test_every_table_a_page_api_budget_or_alert_reads_is_an_asset() -> None:
    tables = _warehouse_tables()
    read = {t for folder in READER_QUERIES for found in _query_reads(folder).values() for t in found}
    read &= tables
    assert {
        "pageload_periods",
        "pageload_examples",
        "resource_request_periods",
        "endpoint_call_periods",
        "inp_interactions",
        "transactions",
        "spans",
        "events",
        "issues",
        "budget_status",
        "issue_live_counters",  # kept at insert, checked by the event_counters step
        "issue_history",  # written by the issue workflow
    } <= read, read
    assert read <= set(_asset_tables().values()), read - set(_asset_tables().values())


def test_no_asset_writes_a_table_nobody_reads() -> None:
    """Every table an asset writes is read by a page, the API, a budget, an alert or another asset's query;
    the performance assets' tables are each read by the next layer up to the views."""
    readers: dict[str, set[str]] = {}
    for folder in sorted(p.name for p in QUERIES_DIR.iterdir() if p.is_dir()):
        for query, found in _query_reads(folder).items():
            for table in found:
                readers.setdefault(table, set()).add(query)
    for folder in ("stacklens", "api", "dashboards"):
        for table in _code_reads(folder):
            readers.setdefault(table, set()).add(folder)
    written = {key: name for key, name in _asset_tables().items() if not key.startswith("raw/")}
    assert {"pageload_facts", "pageload_periods", "resource_facts", "endpoint_call_periods"} <= set(written)
    assert not [name for name in written.values() if not readers.get(name)], readers
    # The layers: facts are read by the pipeline queries of their states, the states by the views' queries.
    assert {"pipelines/pageload_periods_hour", "pipelines/pageload_examples_hour"} <= readers[
        "pageload_facts"
    ]
    assert "performance/window_states" in readers["pageload_periods"]
    assert "performance/sample_medians" in readers["pageload_examples"]
    assert "pipelines/resource_request_periods_minute" in readers["resource_facts"]
    assert "pipelines/endpoint_call_periods_hour" in readers["endpoint_facts"]


def test_pipeline_queries_are_named_after_the_table_they_write() -> None:
    """`<table>.sql`, or `<table>_<grain>.sql` for a state table written per grain (`_blocks`: the blocks
    of days)."""
    grains = ("minute", "hour", "day", "blocks")
    for path in sorted((QUERIES_DIR / "pipelines").glob("*.sql")):
        targets = set(WRITE.findall(load_query(f"pipelines/{path.stem}")))
        if len(targets) != 1:
            continue  # a read (dirty hours, comparisons) or a repair of several tables
        (table,) = targets
        performance = table.endswith(("_facts", "_periods", "_examples"))
        if performance:
            assert path.stem == table or path.stem in {f"{table}_{g}" for g in grains}, (path.name, table)
