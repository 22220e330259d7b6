"""`stacklens migrate` as a subprocess with its own data dir (the embedded engine is one per process)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def _run(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("STACKLENS_")}
    env.update({"STACKLENS_DATA_DIR": str(data_dir), "STACKLENS_SECRET_KEY": "cli-test-secret-0123456789"})
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
    assert "warehouse: would apply 0001_create_events" in dry.stdout
    assert "0001_create_events\tpending" in _run(tmp_path, "--status").stdout
    applied = _run(tmp_path)
    assert applied.returncode == 0, applied.stderr
    assert "warehouse: applied 0004_create_ingest_batches" in applied.stdout
    status = _run(tmp_path, "--status").stdout
    assert "0001_create_events\tpending" not in status and "0001_create_events\t20" in status
    again = _run(tmp_path)
    assert again.returncode == 0 and "warehouse: up to date" in again.stdout
