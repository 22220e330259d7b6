"""`--status` is current within about a second, without writing the tracker (and its fsyncs) more often."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from typing import Any

from tests.shipper.harness import SHIPPER, Workspace, append_lines, new_ids, wait_until
from tests.shipper.ingest_server import IngestServer


def status(ws: Workspace) -> dict[str, Any]:
    result = subprocess.run(
        [str(SHIPPER), "--config", str(ws.config), "--status", "--json"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_last_error_shows_at_once_while_the_tracker_is_left_alone(
    ws: Workspace, server: IngestServer
) -> None:
    ws.settings.update(commitInterval="1h", retryBackoff="3s", retryBackoffMax="3s", parkDelay="1m")
    ws.write_config()
    server.behaviour.status = 503
    append_lines(ws.day(), new_ids(30))
    proc = ws.start()
    wait_until(lambda: server.landed.statuses[503] >= 1, 15, "the first 503")

    def shows_the_503() -> bool:
        error = status(ws)["last_error"]
        return bool(error) and "503" in error["message"]

    wait_until(shows_the_503, 2.0, "--status to show the 503")
    assert ws.tracker()["stats"]["last_error"] is None  # no tracker generation was spent on it
    text = subprocess.run(
        [str(SHIPPER), "--config", str(ws.config), "--status"], capture_output=True, text=True, timeout=30
    ).stdout
    assert "Last error: " in text and "503 Service Unavailable" in text
    proc.signal(signal.SIGTERM)
    proc.wait(15)


def test_counters_follow_a_busy_shipper(ws: Workspace, server: IngestServer) -> None:
    ws.settings.update(commitInterval="1h")
    ws.write_config()
    server.behaviour.commit_then_sleep = 0.03  # ~30 batches a second: busy for several seconds
    ids = new_ids(300 * 50)
    append_lines(ws.day(), ids)
    proc = ws.start()
    wait_until(lambda: server.landed.statuses[200] >= 20, 20, "twenty batches at the server")
    with server.lock:
        landed = sum(server.landed.counts.values())
    time.sleep(1.5)
    now = status(ws)
    assert now["counters"]["events"] >= landed, (now["counters"], landed)
    assert now["last_batch"] is not None and now["last_batch"]["events"] == 50
    assert now["files"][0]["offset"] >= landed * len(ws.day().read_bytes()) // len(ids)
    assert ws.tracker()["stats"]["counters"]["events"] < landed  # busy: the tracker waits for commitInterval
    assert now["status_written_at"] is not None
    server.behaviour.commit_then_sleep = 0.0
    wait_until(lambda: set(ids) <= server.ids(), 30, "delivery")
    proc.signal(signal.SIGTERM)
    assert proc.wait(15) == 0
    final = status(ws)
    assert final["counters"]["events"] == len(ids) and final["state"] == "stopped"
    assert final["pending"] == {"bytes": 0, "lines": 0}


def test_status_piped_into_head_ends_quietly(ws: Workspace) -> None:
    """Issue 71: `stacklens-shipper --status --json | head` ended in a BrokenPipeError traceback. The reader
    here (`true`) leaves before the status is written, so the write always meets a closed pipe."""
    piped = subprocess.run(
        [
            "bash",
            "-c",
            f"'{SHIPPER}' --config '{ws.config}' --status --json | true; echo \"${{PIPESTATUS[0]}}\"",
        ],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert "Traceback" not in piped.stderr and "BrokenPipe" not in piped.stderr, piped.stderr
    assert piped.stdout.strip() == "0"
