"""`dagster dev -w workspace.yaml` without the scaled-mode variables: every schedule skips with words that say
what to set (and that the embedded installation runs its pipelines in `stacklens serve`), instead of an
environment-variable error every minute; with the variables set, the schedules plan runs again."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pytest

from pipelines.definitions import defs
from pipelines.resources import SCALED_SETTINGS_MISSING


def _tick(name: str) -> object:
    schedule = defs.resolve_schedule_def(name)
    with dg.instance_for_test() as instance:
        context = dg.build_schedule_context(
            instance=instance, resources={"warehouse": defs.resources["warehouse"]}
        )
        return schedule.evaluate_tick(context)


def test_every_schedule_skips_with_what_to_set(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("STACKLENS_WAREHOUSE_URL", "STACKLENS_WAREHOUSE_DATABASE", "STACKLENS_DATABASE_URL"):
        monkeypatch.delenv(name, raising=False)
    for schedule in defs.schedules:
        result = _tick(schedule.name)
        assert not result.run_requests, schedule.name  # type: ignore[attr-defined]
        assert result.skip_message == SCALED_SETTINGS_MISSING.format(  # type: ignore[attr-defined]
            names="STACKLENS_WAREHOUSE_URL, STACKLENS_WAREHOUSE_DATABASE"
        ), schedule.name
        assert "stacklens serve" in result.skip_message and "stacklens pipelines ui" in result.skip_message  # type: ignore[attr-defined]


def test_with_the_variables_the_budgets_schedule_runs(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("STACKLENS_WAREHOUSE_URL", f"chdb://{tmp_path / 'warehouse'}")
    monkeypatch.setenv("STACKLENS_WAREHOUSE_DATABASE", "unconfigured_test")
    result = _tick("budgets_every_5_minutes")
    assert result.skip_message is None and len(result.run_requests) == 1  # type: ignore[attr-defined]
