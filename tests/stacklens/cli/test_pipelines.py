"""`stacklens pipelines run` materializes through the real definitions; bad input gets one clear line."""

from __future__ import annotations

import pytest

from stacklens.cli.main import main
from stacklens.settings import Settings
from stacklens.warehouse.client import ensure_database, get_warehouse
from stacklens.warehouse.migrations import discover


def test_unknown_asset_is_refused(settings: Settings, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["pipelines", "run", "--select", "nope"]) == 2
    assert "unknown asset nope" in capsys.readouterr().err


def test_run_with_no_data_does_nothing(settings: Settings, capsys: pytest.CaptureFixture[str]) -> None:
    ensure_database(settings)
    client = get_warehouse(settings)
    for migration in discover():
        if int(migration.name[:4]) < 200:
            for statement in migration.statements(settings.retention_days):
                client.command(statement)
    assert main(["pipelines", "run", "--select", "issues"]) == 0
    assert "nothing to do" in capsys.readouterr().out
    assert (settings.dagster_home / "dagster.yaml").exists()
