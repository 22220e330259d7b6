"""The serving process sets aside what it built at start and collects young objects less often; cycles made
afterwards are still collected. In a process of its own: the collector's settings are the whole process's."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]

SETTLED = textwrap.dedent(
    """
    import gc, json, weakref
    from stacklens.cli.app import build_app
    from stacklens.cli.heap import settle_heap
    from stacklens.settings import Settings

    build_app(Settings())
    settle_heap()
    frozen = gc.get_freeze_count()

    class Node:
        pass

    # A cycle made after the start: nothing but the collector frees it.
    first, second = Node(), Node()
    first.other, second.other = second, first
    gone = []
    weakref.finalize(first, gone.append, True)
    del first, second
    # Net allocations enough for a few young passes (each list lives on, as a request's rows until its end).
    kept = [[n] for n in range(60_000)]
    print(json.dumps({"frozen": frozen, "threshold": gc.get_threshold(), "cycle_freed": bool(gone)}))
    """
)


def test_the_start_is_set_aside_and_later_cycles_are_still_collected(tmp_path: Path) -> None:
    ran = subprocess.run(
        [sys.executable, "-c", SETTLED],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PATH": "/usr/bin:/bin", "STACKLENS_DATA_DIR": str(tmp_path), "HOME": str(tmp_path)},
        timeout=120,
    )
    assert ran.returncode == 0, ran.stderr[-3000:]
    figures = json.loads(ran.stdout.strip().splitlines()[-1])
    # The app, its routes and its libraries: far more objects than a request makes.
    assert figures["frozen"] > 100_000
    assert figures["threshold"] == [10_000, 50, 1_000]
    assert figures["cycle_freed"] is True


RELEASED = textwrap.dedent(
    """
    import json, threading
    from stacklens.cli.heap import release_freed_memory, tune_allocator

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


def test_the_releaser_purges_often_and_trims_on_its_slower_beat() -> None:
    """The engine's purge (``often``) runs on its own short beat; the trim and ``also`` wait for theirs."""
    import threading

    from stacklens.cli.heap import FreedMemoryReleaser

    purges: list[float] = []
    purged_thrice = threading.Event()
    trimmed = threading.Event()

    def purge() -> None:
        purges.append(1.0)
        if len(purges) >= 3:
            purged_thrice.set()

    releaser = FreedMemoryReleaser(every=3600.0, also=trimmed.set, often=purge, often_every=0.02)
    releaser.start()
    try:
        assert purged_thrice.wait(30.0)
    finally:
        releaser.stop()
    assert not trimmed.is_set()
