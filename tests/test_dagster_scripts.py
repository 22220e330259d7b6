"""tests/dagster_scripts.py: Dagster's storages opened with one ScriptDirectory a process are the storages
Dagster makes, stamped at the head its revision files name; other locations are read each time as before."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from alembic.config import Config
from alembic.script import ScriptDirectory

from pipelines.embedded import dagster_instance
from stacklens.control.db import MIGRATIONS_DIR
from stacklens.settings import Settings
from tests import dagster_scripts


def _stamped(path: Path) -> list[str]:
    with sqlite3.connect(path) as connection:
        return [row[0] for row in connection.execute("SELECT version_num FROM alembic_version")]


def test_fresh_and_reopened_instances_are_stamped_at_dagsters_head(settings: Settings) -> None:
    config = Config()
    config.set_main_option("script_location", "dagster:_core/storage/alembic")
    # The head read from the revision files now, by Alembic's own constructor.
    head = dagster_scripts.alembic_from_config(ScriptDirectory, config).get_current_head()
    for _ in range(2):  # created, then opened again (checked against the head)
        instance = dagster_instance(settings)
        assert instance.get_runs(limit=1) == []
        instance.dispose()
    home = settings.dagster_home
    databases = [
        home / "history" / "runs.db",
        home / "schedules" / "schedules.db",
        home / "history" / "runs" / "index.db",
    ]
    assert [_stamped(path) for path in databases] == [[head]] * 3
    # One directory served both opens: its revision map was built once.
    assert ScriptDirectory.from_config(config) is ScriptDirectory.from_config(config)


def test_any_other_location_is_read_again_each_time() -> None:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    first, second = ScriptDirectory.from_config(config), ScriptDirectory.from_config(config)
    assert first is not second and first.get_current_head() == second.get_current_head()
