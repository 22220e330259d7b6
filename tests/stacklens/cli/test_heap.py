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
