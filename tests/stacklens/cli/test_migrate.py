"""`stacklens migrate` as a subprocess with its own data dir (the embedded engine is one per process)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest


def _run(data_dir: Path, *args: str, **extra: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("STACKLENS_")}
    env.update({"STACKLENS_DATA_DIR": str(data_dir), "STACKLENS_SECRET_KEY": "cli-test-secret-0123456789"})
    env.update(extra)
    return subprocess.run(
        [sys.executable, "-m", "stacklens.cli.main", "migrate", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_dry_run_status_apply_and_rerun(tmp_path: Path) -> None:
    dry = _run(tmp_path, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "-- warehouse: would apply 0001_create_events (1 statements for a single server)" in dry.stdout
    # The statements themselves, as they would run: the file's text.
    assert "CREATE TABLE IF NOT EXISTS events\n(\n    org_id            UInt64," in dry.stdout
    assert "ENGINE = ReplacingMergeTree(received_at)" in dry.stdout and "ON CLUSTER" not in dry.stdout
    assert "0001_create_events\tpending" in _run(tmp_path, "--status").stdout
    applied = _run(tmp_path)
    assert applied.returncode == 0, applied.stderr
    assert "] applied 0004_create_ingest_batches (" in applied.stdout
    status = _run(tmp_path, "--status").stdout
    assert "0001_create_events\tpending" not in status and "0001_create_events\t20" in status
    again = _run(tmp_path)
    assert again.returncode == 0 and "warehouse: up to date" in again.stdout


def test_dry_run_prints_the_statements_rendered_for_a_cluster(tmp_path: Path) -> None:
    dry = _run(tmp_path, "--dry-run", STACKLENS_WAREHOUSE_CLUSTER="{cluster}")
    assert dry.returncode == 0, dry.stderr
    assert "-- warehouse: would apply 0001_create_events (2 statements for cluster '{cluster}')" in dry.stdout
    assert "CREATE TABLE IF NOT EXISTS events_local ON CLUSTER '{cluster}'\n(" in dry.stdout
    assert (
        "ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/{database}/{table}', '{replica}', "
        in (dry.stdout)
    )
    assert (
        "CREATE TABLE IF NOT EXISTS events ON CLUSTER '{cluster}' AS stacklens.events_local\n"
        "ENGINE = Distributed('{cluster}', 'stacklens', 'events_local', cityHash64(project_id, fingerprint));"
    ) in dry.stdout
    assert "TO issue_live_counters_local AS" in dry.stdout
    assert "0001_create_events\tpending" in _run(tmp_path, "--status").stdout  # nothing ran


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.slow
def test_migrate_while_serve_owns_the_embedded_warehouse_says_so_in_one_line(tmp_path: Path) -> None:
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("STACKLENS_")}
    env.update(
        {
            "STACKLENS_DATA_DIR": str(tmp_path),
            "STACKLENS_SECRET_KEY": "cli-test-secret-0123456789",
            "STACKLENS_RUN_SCHEDULES": "false",
        }
    )
    server = subprocess.Popen(
        [sys.executable, "-m", "stacklens.cli.main", "serve", "--host", "127.0.0.1", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            assert server.poll() is None, f"serve exited: {server.stderr.read() if server.stderr else ''}"
            try:
                if httpx.get(f"http://127.0.0.1:{port}/api/health", timeout=2).status_code in (200, 503):
                    break
            except httpx.HTTPError:
                time.sleep(0.3)
        else:
            raise AssertionError("stacklens serve did not answer within 90 s")
        busy = _run(tmp_path)
        assert busy.returncode == 2, (busy.stdout, busy.stderr)
        message = busy.stderr.strip()
        assert len(message.splitlines()) == 1 and "Traceback" not in busy.stderr, busy.stderr
        assert "is open in another process" in message and "stacklens serve" in message
        assert str(tmp_path) in message
    finally:
        server.terminate()
        _, served = server.communicate(timeout=30)
    # The composition root's logging: startup and migrations on stderr, with level and logger name.
    assert f"INFO stacklens.cli.serve: StackLens is serving on http://127.0.0.1:{port}" in served, served
    assert f"data dir {tmp_path}, warehouse: embedded ClickHouse (chdb) in {tmp_path / 'warehouse'}" in served
    assert "INFO stacklens.cli.serve: warehouse: applied 0001_create_events" in served
