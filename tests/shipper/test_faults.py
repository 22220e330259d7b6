"""The shipper's fault hook: a process dies by SIGKILL the n-th time it reaches the named point, never
else."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

REACH = """
import sys
from shipper.faults import hit
for i in range(1, 4):
    hit("after_ack")
    hit("after_send")
    print(i, flush=True)
"""


def _run(spec: str | None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "STACKLENS_SHIPPER_FAULT"}
    if spec is not None:
        env["STACKLENS_SHIPPER_FAULT"] = spec
    return subprocess.run([sys.executable, "-c", REACH], env=env, capture_output=True, text=True, timeout=60)


def test_the_process_dies_at_the_nth_time_it_reaches_the_point() -> None:
    second = _run("after_send:2")
    assert second.returncode == -signal.SIGKILL and second.stdout.split() == ["1"]
    first = _run("after_ack")  # the count defaults to 1
    assert first.returncode == -signal.SIGKILL and first.stdout == ""


def test_unset_or_another_point_changes_nothing() -> None:
    for spec in (None, "mid_tracker_write:1"):
        result = _run(spec)
        assert result.returncode == 0 and result.stdout.split() == ["1", "2", "3"]
