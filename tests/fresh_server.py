"""A script run in a fresh interpreter, as `stacklens serve` starts: an empty data directory of its own, the
schedules thread off (the script drives what it measures), no STACKLENS_ setting of the test process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def run_fresh(script: str, tmp_path: Path, **settings: str) -> dict[str, Any]:
    """Run ``script`` with ``STACKLENS_`` ``settings`` added; the JSON its last printed line holds."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("STACKLENS_")}
    env.update(
        STACKLENS_DATA_DIR=str(tmp_path / "data"),
        STACKLENS_SECRET_KEY="s" * 64,
        STACKLENS_RUN_SCHEDULES="false",
        PYTHONPATH=str(ROOT),
        **{f"STACKLENS_{name.upper()}": value for name, value in settings.items()},
    )
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    seen: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return seen
