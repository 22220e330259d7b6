"""The ingest workers' child interpreters: tasks answered over pipes, failures carried to the caller, a
worker's death breaking the pool as a process pool breaks, and no third process beside the workers."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

import pytest

from stacklens.ingest.worker_processes import WorkerProcesses


def _nothing() -> None:
    """An initializer with nothing to set up."""


def test_tasks_are_answered_in_the_workers_and_their_errors_reach_the_caller() -> None:
    pool = WorkerProcesses(2, _nothing, ())
    try:
        pids = {pool.submit(os.getpid).result(timeout=60) for _ in range(6)}
        assert pids <= set(pool.pids) and os.getpid() not in pids
        assert pool.submit(divmod, 17, 5).result(timeout=60) == (3, 2)
        with pytest.raises(ZeroDivisionError):
            pool.submit(divmod, 1, 0).result(timeout=60)
        assert (
            pool.submit(len, b"x" * 5_000_000).result(timeout=60) == 5_000_000
        )  # a large body travels whole
    finally:
        pool.shutdown()
    assert all(_ended(pid) for pid in pool.pids)
    with pytest.raises(RuntimeError):
        pool.submit(os.getpid)


def test_a_worker_that_dies_with_a_task_breaks_the_pool() -> None:
    pool = WorkerProcesses(2, _nothing, ())
    try:
        victim = pool.submit(os.getpid).result(timeout=60)
        held = pool.submit(time.sleep, 30)  # one of the two workers sleeps: kill them both, as a crash would
        time.sleep(0.5)
        for pid in pool.pids:
            os.kill(pid, signal.SIGKILL)
        with pytest.raises(BrokenProcessPool):
            held.result(timeout=60)
        with pytest.raises(BrokenProcessPool):
            pool.submit(os.getpid)
        assert victim in pool.pids
    finally:
        pool.shutdown()


def test_the_pool_starts_no_process_beside_its_workers(tmp_path: Path) -> None:
    """multiprocessing's spawn start would add its resource tracker (a third interpreter, 12 MiB) to the
    server's tree for the rest of its life."""
    script = (
        "import os\n"
        "from stacklens.ingest.workers import PreparePool\n"
        "pool = PreparePool(2)\n"
        "pool.warm_up()\n"
        "kids = open(f'/proc/{os.getpid()}/task/{os.getpid()}/children').read().split()\n"
        "print(sorted(int(k) for k in kids) == sorted(pool._pool().pids), len(kids))\n"
        "pool.close()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["True", "2"], done.stdout


def _ended(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(") ", 1)[1][0] == "Z"
    except FileNotFoundError:
        return True
