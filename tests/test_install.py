"""Installing StackLens says nothing a user has to wonder about (issue #47): building the package's
metadata, as `make up` and `pip install -e .` do, warns about no deprecated licence table."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_install_has_no_licence_warning(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--dry-run",
            "--no-deps",
            "--ignore-installed",
            "-e",
            str(ROOT),
        ],
        cwd=tmp_path,
        env={**os.environ, "STACKLENS_PURE_PYTHON": "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    output = done.stdout + done.stderr
    assert "Would install stacklens" in output
    assert "license" not in output.lower(), output[-2000:]
