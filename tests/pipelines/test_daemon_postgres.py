"""Scaled pipelines: a real ``dagster-daemon`` over a Dagster instance in the machine's PostgreSQL (a fresh
database, dropped afterwards) runs a schedule tick of ``issues_every_minute`` whose run materializes the
``issues`` mart into the warehouse (later ticks picking up later events are the in-process schedule tests':
a second tick here cost a minute of waiting for the next one).

No ClickHouse server runs here, so the warehouse is the embedded one: the daemon's code server (schedule
evaluation) and run workers take turns on its data directory (``pipelines/resources.py``), and so does this
test's helper between the ticks. With a ClickHouse server the same processes simply share it.

The daemon runs under a clock moved to second 45 of a minute as it starts (tests/clock_shift.py): its
scheduler's first pass sees the schedule before the minute ends, and the tick comes at that minute's end
instead of after up to a minute of waiting. Its code server and run workers keep the real clock: the tick's
time is the daemon's, handed to them.

Only ``issues_every_minute`` runs here: the other schedules are stopped in the instance before the daemon
starts. Left running, the alerts and monitors ticks of the same minute were queued first and held the one run
slot of an embedded warehouse (``pipelines/instance.py``) for a minute or more on a loaded machine, while the
issues run waited behind them.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import dagster as dg
import psycopg
import pytest

from tests.clock_shift import SHIFT_ENV, shift_to_second
from tests.conftest import TEST_SECRET

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def dagster_database(postgres_url: str) -> Iterator[str]:
    """A fresh PostgreSQL database for the Dagster instance, as the psycopg2 URL dagster-postgres takes."""
    parts = urlsplit(postgres_url.replace("postgresql+psycopg://", "postgresql://"))
    name = f"stacklens_dagster_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(urlunsplit(parts), autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield urlunsplit(parts._replace(scheme="postgresql+psycopg2", path=f"/{name}"))
    finally:
        with psycopg.connect(urlunsplit(parts), autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _run(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [sys.executable, *args], env=env, cwd=ROOT, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, (args, done.stdout[-2000:], done.stderr[-3000:])
    return done.stdout


def _successful_runs(instance: dg.DagsterInstance) -> list[dg.DagsterRun]:
    filters = dg.RunsFilter(
        job_name="issues_job",
        statuses=[dg.DagsterRunStatus.SUCCESS],
        tags={"dagster/schedule_name": "issues_every_minute"},
    )
    return list(instance.get_runs(filters=filters))


def _only_the_schedule(instance: dg.DagsterInstance, name: str) -> list[str]:
    """Stop every schedule of the workspace the daemon loads except ``name``; the stopped names.

    Loaded through ``workspace.yaml`` as the daemon loads it (a code server of its own), so the stopped
    states are those of the schedules the daemon evaluates."""
    from dagster._core.workspace.context import WorkspaceProcessContext
    from dagster._core.workspace.load_target import WorkspaceFileTarget

    stopped = []
    target = WorkspaceFileTarget([str(ROOT / "workspace.yaml")])
    with WorkspaceProcessContext(instance, target) as process:
        for location in process.create_request_context().code_locations:
            for repository in location.get_repositories().values():
                for schedule in repository.get_schedules():
                    if schedule.name != name:
                        instance.stop_schedule(
                            schedule.get_remote_origin_id(), schedule.selector_id, schedule
                        )
                        stopped.append(schedule.name)
    return stopped


def _wait_for_runs(
    instance: dg.DagsterInstance, count: int, daemon: subprocess.Popen[str], log: Path
) -> None:
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        assert daemon.poll() is None, f"dagster-daemon exited: {log.read_text()[-3000:]}"
        if len(_successful_runs(instance)) >= count:
            return
        failed = instance.get_runs(filters=dg.RunsFilter(statuses=[dg.DagsterRunStatus.FAILURE]))
        assert not failed, [instance.get_run_by_id(r.run_id) for r in failed]
        time.sleep(2)
    raise AssertionError(f"no {count} successful issues runs within 240 s: {log.read_text()[-3000:]}")


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_daemon_ticks_materialize_marts_with_the_instance_in_postgres(
    tmp_path: Path, dagster_database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "dagster"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("STACKLENS_", "DAGSTER_"))}
    env.update(
        {
            "PYTHONPATH": str(ROOT),
            "DAGSTER_HOME": str(home),
            "STACKLENS_DATA_DIR": str(tmp_path / "data"),
            "STACKLENS_WAREHOUSE_URL": f"chdb://{tmp_path / 'warehouse'}",
            "STACKLENS_WAREHOUSE_DATABASE": "stacklens",
            "STACKLENS_DATABASE_URL": f"sqlite:///{tmp_path / 'control.db'}",
            "STACKLENS_DAGSTER_DATABASE_URL": dagster_database,
            "STACKLENS_SECRET_KEY": TEST_SECRET,
        }
    )
    _run(env, "-m", "stacklens.cli.main", "migrate")
    written = _run(env, "-m", "stacklens.cli.main", "pipelines", "instance")
    assert f"# {home / 'dagster.yaml'}" in written
    assert (
        "postgres_url:\n      env: STACKLENS_DAGSTER_DATABASE_URL" in written and "psycopg2://" not in written
    )
    _run(env, "-m", "tests.pipelines.daemon_warehouse", "seed", "0", "3")

    monkeypatch.setenv("STACKLENS_DAGSTER_DATABASE_URL", dagster_database)
    instance = dg.DagsterInstance.from_config(str(home))
    try:
        # The instance the daemon writes to is PostgreSQL's, not SQLite files in DAGSTER_HOME.
        assert type(instance.run_storage).__name__ == "PostgresRunStorage"
        assert "alerts_every_minute" in _only_the_schedule(instance, "issues_every_minute")
        log = tmp_path / "daemon.log"
        with log.open("w") as out:
            daemon = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "tests.clock_shift",
                    "dagster._daemon",
                    "run",
                    "-w",
                    str(ROOT / "workspace.yaml"),
                ],
                env={**env, SHIFT_ENV: str(shift_to_second(45))},
                cwd=ROOT,
                stdout=out,
                stderr=subprocess.STDOUT,
                text=True,
                start_new_session=True,  # its own process group: the code server it starts stops with it
            )
        try:
            _wait_for_runs(instance, 1, daemon, log)
            # The stopped schedules stayed stopped under the daemon: every run is the issues schedule's.
            assert {run.job_name for run in instance.get_runs()} == {"issues_job"}, log.read_text()[-3000:]
        finally:
            # The daemon's gRPC code server once outlived a terminated daemon (and a SIGTERM of its own): the
            # whole group is asked to stop, then whatever is left of it once the daemon has gone is killed.
            os.killpg(daemon.pid, signal.SIGTERM)
            daemon.wait(timeout=60)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(daemon.pid, signal.SIGKILL)
    finally:
        instance.dispose()
    assert _run(env, "-m", "tests.pipelines.daemon_warehouse", "issues").strip() == "3"
    assert not list(home.glob("history/runs*.db")), "no SQLite run storage beside dagster.yaml"
