"""The delivery loop's exit: SIGTERM whose grace period ends unanswered, and the peak RSS it reports."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time

from shipper.agent import EXIT_UNACKNOWLEDGED
from tests.shipper.harness import (
    RSS_CAP_MIB,
    SHIPPER,
    Workspace,
    append_lines,
    assert_exactly_once,
    new_ids,
    wait_until,
)
from tests.shipper.ingest_server import IngestServer


def test_grace_period_ending_unanswered_exits_non_zero_and_loses_nothing(
    ws: Workspace, server: IngestServer
) -> None:
    ws.settings.update(shutdownGrace="1s", timeout="30s")
    ws.write_config()
    server.behaviour.commit_then_sleep = 20.0  # lands the batch, answers long after the grace period
    ids = new_ids(60)
    append_lines(ws.day(), ids)
    proc = ws.start()
    wait_until(lambda: server.landed.statuses[200] >= 1, 15, "the first batch at the server")
    proc.signal(signal.SIGTERM)
    started = time.monotonic()
    assert proc.wait(10) == EXIT_UNACKNOWLEDGED, proc.output()[-2000:]
    assert time.monotonic() - started < 5
    stopped = [line for line in proc.output().splitlines() if "shutdown grace period" in line]
    assert len(stopped) == 1 and "Stopped with 50 events unacknowledged after the 1s" in stopped[0]
    assert "nothing is lost" in stopped[0] and "Idempotency-Key" in stopped[0]
    assert ws.tracker()["files"], "the tracker is written on the way out"

    server.behaviour.commit_then_sleep = 0.0
    again = ws.start()
    wait_until(lambda: set(ids) <= server.ids() and "Batch sent: 10 events" in again.output(), 20, "delivery")
    again.signal(signal.SIGTERM)
    assert again.wait(15) == 0, again.output()[-2000:]
    assert server.landed.key_replays >= 1  # the unanswered batch came back under the same key
    assert server.landed.duplicates == 0
    assert_exactly_once(server, set(ids))


def test_reported_peak_rss_is_the_shippers_own(ws: Workspace, server: IngestServer) -> None:
    """A parent that peaked at 200 MiB execs the shipper (as a supervisor's fork and exec does): the peak the
    shipper logs is its own, under the cap, not the inherited one."""
    ids = new_ids(200)
    append_lines(ws.day(), ids)
    grow_then_exec = (
        "import os, sys\n"
        "block = b'x' * (200 * 1024 * 1024)\n"  # every page written: resident
        "del block\n"
        "os.execv(sys.argv[1], sys.argv[1:])\n"
    )
    log_path = ws.root / "rss.log"
    with open(log_path, "wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-c", grow_then_exec, str(SHIPPER), "--config", str(ws.config), "--record"],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_until(lambda: set(ids) <= server.ids(), 30, "delivery")
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(15) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    output = log_path.read_text()
    found = re.search(r"Shipper stopped \(peak RSS ([\d.]+) MiB\)", output)
    assert found, output[-2000:]
    assert 5 < float(found.group(1)) < RSS_CAP_MIB, output[-2000:]
    assert_exactly_once(server, set(ids))
