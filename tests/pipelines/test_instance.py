"""dagster.yaml rendered from the settings: SQLite files for an embedded installation, PostgreSQL storage and
the queued run coordinator for a scaled one; the URL stays in the environment."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pytest
import yaml

from pipelines.instance import instance_config, render_instance_config, write_instance_config
from stacklens.settings import Settings

SCALED_URL = "postgresql+psycopg2://dagster:s3cret-pw@db.internal:5432/dagster"


def test_embedded_instance_keeps_sqlite_files_and_calls_nobody(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path)
    # No telemetry, no "Join the Dagster community" dialog over the UI's first view, and no raw output capture
    # (a `tail -F` and a watcher process for every run).
    config = instance_config(settings)
    assert {k: config[k] for k in ("telemetry", "nux")} == {
        "telemetry": {"enabled": False},
        "nux": {"enabled": False},
    }
    assert "storage" not in config and "run_coordinator" not in config
    path = write_instance_config(settings)
    assert path == tmp_path / "dagster" / "dagster.yaml"
    instance = dg.DagsterInstance.from_config(str(path.parent))
    try:
        assert type(instance.run_storage).__name__ == "SqliteRunStorage"
        assert type(instance.compute_log_manager).__name__ == "NoOpComputeLogManager"
        assert not instance.nux_enabled and not instance.telemetry_enabled
    finally:
        instance.dispose()


def test_scaled_instance_names_the_variable_not_the_password(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, dagster_database_url=SCALED_URL, warehouse_url="http://ch:8123")
    text = render_instance_config(settings)
    assert "s3cret-pw" not in text and "db.internal" not in text
    config = yaml.safe_load(text)
    assert config["storage"] == {"postgres": {"postgres_url": {"env": "STACKLENS_DAGSTER_DATABASE_URL"}}}
    coordinator = config["run_coordinator"]
    assert coordinator["class"] == "QueuedRunCoordinator"
    assert coordinator["config"] == {
        "tag_concurrency_limits": [{"key": "stacklens/serial", "value": "issues", "limit": 1}]
    }
    # With the embedded warehouse the Dagster processes take turns on its directory: one run at a time.
    embedded = instance_config(Settings(data_dir=tmp_path, dagster_database_url=SCALED_URL))
    assert embedded["run_coordinator"]["config"]["max_concurrent_runs"] == 1
    assert config["compute_logs"]["class"] == "NoOpComputeLogManager"


@pytest.mark.parametrize(
    "url", ["postgresql://u@h/db", "postgresql+psycopg://u@h/db", "sqlite:///x.db", "mysql://u@h/db"]
)
def test_other_urls_are_refused_naming_the_variable(url: str) -> None:
    with pytest.raises(ValueError, match="STACKLENS_DAGSTER_DATABASE_URL must be a postgresql\\+psycopg2://"):
        Settings(dagster_database_url=url)
