"""The workspace loads and validates with the Dagster CLI, and the definitions hold what the docs promise."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from pipelines.definitions import defs
from pipelines.schedules import SCHEDULE_CRONS
from stacklens.settings import Settings

ROOT = Path(__file__).resolve().parents[2]


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
    marts = {k: s for k, s in specs.items() if not k.startswith("raw/")}
    assert set(marts) == {
        "event_counters",
        "issues",
        "issue_daily_counts",
        "related_issues",
        "page_metrics",
        "resource_breakdown",
        "api_endpoint_metrics",
        "weekly_trends",
        "release_impact",
        "budget_status",
        "recommendations",
        "alert_evaluations",
        "alert_deliveries",
        "tracker_ticket_states",
    }
    assert {s.group_name for s in marts.values()} == {
        "issues",
        "performance",
        "releases",
        "budgets",
        "alerts",
        "integrations",
    }
    assert all(s.description and len(s.description) > 60 for s in marts.values())
    assert {s.name: s.cron_schedule for s in defs.schedules} == {n: c for n, (c, _) in SCHEDULE_CRONS.items()}


def test_loading_reads_neither_the_control_store_nor_the_environment(tmp_path: Path) -> None:
    """A control store holding budgets, named by the environment, does not change what loads: the code
    location is the same whatever the databases hold (each budget's verdict is a row of budget_status)."""
    from stacklens.control.accounts import create_organization, create_project
    from stacklens.control.budgets import set_budget
    from stacklens.control.db import dispose_engines, migrate_control_store, session_scope
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
    assert proc.stdout.strip() == "['budget_status:budgets_within_limits']"
