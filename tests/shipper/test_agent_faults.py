"""Fault tests: the shipper as a real subprocess, real files, a real local ingest server.

Pass bar for each: every complete line written is at the server exactly once after dedup, the tracker
always parses, and peak RSS stays under the documented cap.
"""

from __future__ import annotations

import os
import random
import signal
import threading
import time

import pytest

from tests.shipper.harness import (
    Workspace,
    append_lines,
    finish,
    new_ids,
    settle,
    wait_until,
)
from tests.shipper.ingest_server import IngestServer


@pytest.mark.slow
def test_kill9_at_random_points(ws: Workspace) -> None:
    rng = random.Random(1234)
    expected: set[str] = set()
    for run in range(24):
        ids = new_ids(rng.randint(20, 400))
        append_lines(ws.day("2026-11-21" if run < 12 else "2026-11-22"), ids, pad=rng.choice([0, 300]))
        expected |= set(ids)
        proc = ws.start()
        time.sleep(rng.uniform(0.05, 0.6))
        proc.kill()
        ws.tracker() if (ws.logs / "tracker.json").exists() else None
    proc = ws.start()
    settle(ws, proc, expected)
    finish(ws, proc, expected)


@pytest.mark.parametrize("point", ["after_send", "after_ack", "mid_tracker_write", "after_tracker_write"])
def test_kill9_at_hazardous_moments(ws: Workspace, point: str) -> None:
    ids: list[str] = []
    for count in (1, 2):
        batch = new_ids(300)
        append_lines(ws.day(), batch)
        ids += batch
        crashed = ws.start(fault=f"{point}:{count}")
        assert crashed.proc.wait(20) == -signal.SIGKILL, crashed.output()[-2000:]
        ws.tracker() if (ws.logs / "tracker.json").exists() else None
    proc = ws.start()
    settle(ws, proc, set(ids))
    finish(ws, proc, set(ids))
    if point in ("after_send", "after_ack"):
        # The batch had landed; the resend carried the same Idempotency-Key and landed nothing again.
        assert ws.server.landed.key_replays >= 1


def test_day_roll_while_old_file_still_written(ws: Workspace) -> None:
    proc = ws.start()
    expected: set[str] = set()
    for _ in range(10):
        for day in ("2026-11-21", "2026-11-22"):
            ids = new_ids(30)
            append_lines(ws.day(day), ids)
            expected |= set(ids)
        time.sleep(0.05)
    settle(ws, proc, expected)
    finish(ws, proc, expected)


def test_truncation_while_running_and_while_stopped(ws: Workspace) -> None:
    first = new_ids(200)
    append_lines(ws.day(), first)
    proc = ws.start()
    settle(ws, proc, set(first))
    os.truncate(ws.day(), 0)
    second = new_ids(50)
    append_lines(ws.day(), second)
    settle(ws, proc, set(first) | set(second))
    finish(ws, proc, set(first) | set(second))
    # While stopped: truncated and rewritten with MORE bytes than the saved offset.
    os.truncate(ws.day(), 0)
    third = new_ids(400)
    append_lines(ws.day(), third)
    expected = set(first) | set(second) | set(third)
    proc = ws.start()
    settle(ws, proc, expected)
    finish(ws, proc, expected)


def test_deleted_file_with_unread_tail(ws: Workspace, server: IngestServer) -> None:
    server.behaviour.status = 503
    ids = new_ids(400)
    append_lines(ws.day(), ids[:100])
    proc = ws.start()
    wait_until(lambda: server.landed.statuses[503] >= 1, 10, "the shipper to open the file")
    append_lines(ws.day(), ids[100:])
    ws.day().unlink()
    server.behaviour.status = 200
    settle(ws, proc, set(ids))
    finish(ws, proc, set(ids))


def test_lines_written_in_pieces(ws: Workspace, server: IngestServer) -> None:
    from tests.shipper.harness import make_line

    proc = ws.start()
    ids = new_ids(20)
    fd = os.open(ws.day(), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    for event_id in ids:
        line = make_line(event_id, pad=500)
        for piece in (line[:7], line[7:300], line[300:]):
            os.write(fd, piece)
            time.sleep(0.02)
    os.close(fd)
    settle(ws, proc, set(ids))
    assert all(not answer["rejected"] for answer in server.landed.keys.values())
    finish(ws, proc, set(ids))


def test_ten_mib_line_and_invalid_utf8_are_dead_lettered(ws: Workspace) -> None:
    before, after = new_ids(50), new_ids(50)
    append_lines(ws.day(), before)
    with open(ws.day(), "ab") as fh:
        fh.write(b'{"v": 1, "payload": "' + b"x" * (10 * 1024 * 1024) + b'"}\n')
        fh.write(b'{"v": 1, "payload": "\xff\xfe"}\n')
    append_lines(ws.day(), after)
    proc = ws.start()
    settle(ws, proc, set(before) | set(after))
    finish(ws, proc, set(before) | set(after))
    dead = (ws.logs / "deadletter.ndjson").read_text().splitlines()
    assert any("line longer than" in d for d in dead) and any("not valid UTF-8" in d for d in dead)
    assert ws.tracker()["stats"]["counters"]["dead_lettered"] == 2


@pytest.mark.parametrize("damage", ["deleted", "truncated", "nul"])
def test_tracker_damage_while_stopped(ws: Workspace, damage: str) -> None:
    ids = new_ids(300)
    append_lines(ws.day(), ids)
    proc = ws.start()
    settle(ws, proc, set(ids))
    finish(ws, proc, set(ids))
    more = new_ids(100)
    append_lines(ws.day(), more)
    tracker = ws.logs / "tracker.json"
    if damage == "deleted":
        tracker.unlink()
    elif damage == "truncated":
        tracker.write_bytes(tracker.read_bytes()[:25])
    else:
        size = tracker.stat().st_size
        with open(tracker, "r+b") as fh:
            fh.write(b"\0" * size)
    proc = ws.start()
    settle(ws, proc, set(ids) | set(more))
    finish(ws, proc, set(ids) | set(more))
    if damage != "deleted":
        assert list(ws.logs.glob("tracker.json.corrupt-*"))


def test_sigterm_under_load(ws: Workspace) -> None:
    expected: set[str] = set()
    stop = threading.Event()

    def writer() -> None:
        while not stop.is_set():
            ids = new_ids(40)
            append_lines(ws.day(), ids)
            expected.update(ids)
            time.sleep(0.01)

    thread = threading.Thread(target=writer)
    thread.start()
    proc = ws.start()
    wait_until(lambda: "Batch sent:" in proc.output(), 20, "delivery under load")  # handlers installed
    time.sleep(0.5)
    proc.signal(signal.SIGTERM)
    started = time.monotonic()
    assert proc.wait(15) == 0
    assert time.monotonic() - started < 5
    stop.set()
    thread.join()
    proc = ws.start()
    settle(ws, proc, expected)
    finish(ws, proc, expected)


@pytest.mark.parametrize(
    ("compress", "compression", "encoding"), [(True, "zstd", "zstd"), (False, "gzip", "identity")]
)
def test_body_encodings(
    ws: Workspace, server: IngestServer, compress: bool, compression: str, encoding: str
) -> None:
    ws.settings.update(compress=compress, compression=compression)
    ws.write_config()
    ids = new_ids(120)
    append_lines(ws.day(), ids)
    proc = ws.start()
    settle(ws, proc, set(ids))
    assert set(server.landed.encodings) == {encoding}
    finish(ws, proc, set(ids))
