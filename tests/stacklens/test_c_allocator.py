"""The C allocator tuned as a process starts gives freed blocks back: what sits between live blocks inside
its arenas goes back on :func:`release_freed_memory`. In a process of its own: the allocator's settings are
the whole process's."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

RELEASED = textwrap.dedent(
    """
    import json, threading
    from stacklens.c_allocator import release_freed_memory, tune_allocator

    def anon_kib():
        for line in open("/proc/self/status"):
            if line.startswith("RssAnon:"):
                return int(line.split()[1])

    tuned = tune_allocator()
    kept = []

    def request_bodies():
        # Bodies of 64 KiB (under the mapping threshold: they live in an arena), every other one freed: the
        # free blocks sit between live ones, where no threshold gives them back.
        blocks = [bytearray(64 * 1024) for _ in range(2_000)]
        kept.extend(blocks[::2])

    workers = [threading.Thread(target=request_bodies) for _ in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    before = anon_kib()
    released = release_freed_memory()
    print(json.dumps({"tuned": tuned, "released": released, "before": before, "after": anon_kib(),
                      "kept_kib": len(kept) * 64}))
    """
)


def test_the_c_allocator_gives_freed_blocks_back() -> None:
    ran = subprocess.run(
        [sys.executable, "-c", RELEASED],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PATH": "/usr/bin:/bin"},
        timeout=120,
    )
    assert ran.returncode == 0, ran.stderr[-3000:]
    figures = json.loads(ran.stdout.strip().splitlines()[-1])
    assert figures["tuned"] is True and figures["released"] is True
    # 4 threads x 2,000 blocks of 64 KiB, half of them freed between live ones (250 MiB): given back, down to
    # what is still in use and the interpreter's own.
    assert figures["before"] - figures["after"] > 100 * 1024, figures
    assert figures["kept_kib"] <= figures["after"] < figures["kept_kib"] + 64 * 1024, figures
