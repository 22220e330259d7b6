"""`stacklens pipelines run` materializes through the real definitions; bad input gets one clear line."""

from __future__ import annotations

import pytest

from stacklens.cli.main import main
from stacklens.settings import Settings
from stacklens.warehouse.migrations import apply_migrations


def test_unknown_asset_is_refused(settings: Settings, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["pipelines", "run", "--select", "nope"]) == 2
    assert "unknown asset nope" in capsys.readouterr().err


def test_run_with_no_data_does_nothing(settings: Settings, capsys: pytest.CaptureFixture[str]) -> None:
    apply_migrations(settings, up_to=199)
    assert main(["pipelines", "run", "--select", "issues"]) == 0
    assert "nothing to do" in capsys.readouterr().out
    assert (settings.dagster_home / "dagster.yaml").exists()
