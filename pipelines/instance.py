"""The Dagster instance's configuration (``$DAGSTER_HOME/dagster.yaml``), rendered from the settings.

Embedded mode keeps the instance in SQLite files under ``<data_dir>/dagster``, read by the in-process runner
and the read-only UI. Scaled mode (``STACKLENS_DAGSTER_DATABASE_URL`` set) keeps runs, event logs and
schedule ticks in PostgreSQL (``dagster-postgres``), so ``dagster-daemon``, ``dagster-webserver`` and any
number of API workers on other machines see one instance. The file names the variable instead of holding
the URL: the password stays in the environment, never in a file the UI or a backup shows.

In scaled mode runs go through the queued run coordinator: at most one run of the issues job at a time (its
tag, see ``pipelines/jobs.py``), and with the embedded warehouse one run at a time overall, since the
engine's data directory is opened by one process at a time (``pipelines/resources.py``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from pipelines.jobs import SERIAL_TAG
from stacklens.settings import Settings

DATABASE_URL_VARIABLE = "STACKLENS_DAGSTER_DATABASE_URL"


def instance_config(settings: Settings) -> dict[str, Any]:
    """What ``dagster.yaml`` holds for ``settings`` (as a mapping)."""
    # The service must not call out (telemetry), and the read-only UI (`stacklens pipelines ui`) opens on the
    # asset graph, not under Dagster's "Join the Dagster community" dialog (the new-user experience, "nux").
    config: dict[str, Any] = {"telemetry": {"enabled": False}, "nux": {"enabled": False}}
    # No capture of a step's raw stdout and stderr: Dagster's default starts `tail -F` and a watcher process
    # for every run (two processes a minute under `stacklens serve`), and where a run's thread had SIGTERM
    # blocked their clean-up waited 2 x 30 s for each run. The assets log through Dagster's structured log,
    # which the UI still shows; they print nothing.
    config["compute_logs"] = {
        "module": "dagster._core.storage.noop_compute_log_manager",
        "class": "NoOpComputeLogManager",
    }
    if not settings.dagster_database_url:
        return config  # embedded: SQLite files beside this file; runs execute inside `stacklens serve`
    config["storage"] = {"postgres": {"postgres_url": {"env": DATABASE_URL_VARIABLE}}}
    coordinator: dict[str, Any] = {
        "tag_concurrency_limits": [{"key": SERIAL_TAG, "value": "issues", "limit": 1}]
    }
    if settings.embedded_warehouse:
        coordinator["max_concurrent_runs"] = 1
    config["run_coordinator"] = {
        "module": "dagster.core.run_coordinator",
        "class": "QueuedRunCoordinator",
        "config": coordinator,
    }
    return config


def render_instance_config(settings: Settings) -> str:
    """``dagster.yaml`` as text, with a header saying where it comes from."""
    header = (
        "# Written by StackLens from its settings (`stacklens pipelines instance`); edits are overwritten.\n"
    )
    return header + yaml.safe_dump(instance_config(settings), sort_keys=False)


def write_instance_config(settings: Settings, home: Path | None = None) -> Path:
    """Write ``dagster.yaml`` into ``home`` (default: the settings' Dagster home) when it differs."""
    home = home or settings.dagster_home
    home.mkdir(parents=True, exist_ok=True)
    path = home / "dagster.yaml"
    text = render_instance_config(settings)
    if not path.exists() or path.read_text() != text:
        path.write_text(text)
    return path
