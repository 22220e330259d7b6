"""The dead letters are bounded: the real shipper against a real local server, with ``maxDeadLetterBytes``
small enough to fill. When full, new dead letters are counted but not kept, the shipper says so once per
fill, the file never passes the bound, and delivery of the good lines goes on."""

from __future__ import annotations

import json
import signal

import pytest

from tests.shipper.harness import RSS_CAP_MIB, Workspace, append_lines, new_ids, wait_until
from tests.shipper.ingest_server import IngestServer

BOUND = 4096
FULL = "Dead letters full: "


@pytest.fixture(autouse=True)
def patient_stop(ws: Workspace) -> None:
    """A long shutdown grace: a tracker fsync on a busy disk can outlast the workspace's 3 s, and how a stop
    ends in time is not what these tests are about (a clean stop takes milliseconds either way)."""
    ws.settings["shutdownGrace"] = "20s"
    ws.write_config()


def bad_lines(n: int, tag: str) -> bytes:
    """Lines that are not JSON (passed over by the shipper itself), ~500 bytes each."""
    return b"".join(f"{{not json {tag} {i} ".encode() + b"x" * 480 + b"\n" for i in range(n))


def passed_over(ws: Workspace) -> int:
    counters = json.loads(ws.cli("--status", "--json").stdout)["counters"]
    return counters["dead_lettered"] + counters["dead_letters_not_kept"]


def test_a_full_dead_letter_file_keeps_its_bound_and_says_so_once_per_fill(
    ws: Workspace, server: IngestServer
) -> None:
    ws.settings["maxDeadLetterBytes"] = BOUND
    ws.write_config()
    dead = ws.logs / "deadletter.ndjson"
    proc = ws.start()
    expected: set[str] = set()
    for round_ in range(3):  # three batches' worth of bad lines, good lines between
        ids = new_ids(5)
        append_lines(ws.day(), ids)
        with open(ws.day(), "ab") as fh:
            fh.write(bad_lines(6, f"a{round_}"))
        expected |= set(ids)
        wait_until(lambda ids=ids: set(ids) <= server.ids(), 15, "the good lines")
    wait_until(lambda: passed_over(ws) == 18, 15, "every bad line passed over")
    kept = len(ws.dead_letters())
    assert 0 < kept < 18 and dead.stat().st_size <= BOUND
    assert proc.output().count(FULL) == 1, proc.output()[-3000:]
    assert (
        f"Dead letters full: {dead} has reached maxDeadLetterBytes ({BOUND} bytes); lines passed over from "
        "now on are counted (dead_letters_not_kept in --status) but not kept, until it is resent "
        "(stacklens-shipper --resend-dead-letters, once the cause is fixed) or moved away"
    ) in proc.output()
    status = json.loads(ws.cli("--status", "--json").stdout)
    assert status["counters"]["dead_lettered"] == kept
    assert status["counters"]["dead_letters_not_kept"] == 18 - kept
    assert status["dead_letters"]["lines"] == kept and status["dead_letters"]["max_bytes"] == BOUND
    assert f"Dead letters: {kept} lines, {dead.stat().st_size} of {BOUND} bytes" in ws.cli("--status").stdout

    # The operator moves the file away: dead letters are kept again, and the next fill is reported again.
    dead.rename(ws.root / "deadletter.saved")
    ids = new_ids(5)
    append_lines(ws.day(), ids)
    with open(ws.day(), "ab") as fh:
        fh.write(bad_lines(12, "b"))
    wait_until(lambda: set(ids) <= server.ids() and passed_over(ws) == 30, 15, "the second round")
    assert proc.output().count(FULL) == 2
    assert dead.stat().st_size <= BOUND
    assert all(" b " in letter["line"] for letter in ws.dead_letters())
    proc.signal(signal.SIGTERM)
    assert proc.wait(30) == 0, proc.output()[-3000:]
    assert ws.tracker()["stats"]["counters"]["dead_letters_not_kept"] == 30 - kept - len(ws.dead_letters())


def test_lines_kept_whole_for_the_dead_letters_stay_within_the_memory_cap(
    ws: Workspace, server: IngestServer
) -> None:
    """Passed-over lines are held whole until their batch's dead letters are written, so they count
    against maxInflightBytes like lines to send: 48 lines of 1 MB that are not UTF-8 never sit in memory
    at once."""
    ids = new_ids(5)
    with open(ws.day(), "ab") as fh:
        for i in range(48):
            fh.write(b'{"v": 1, "n": %d, "payload": "' % i + b"\xff" * 1_000_000 + b'"}\n')
    append_lines(ws.day(), ids)
    proc = ws.start()
    wait_until(lambda: set(ids) <= server.ids() and passed_over(ws) == 48, 60, "delivery")
    proc.signal(signal.SIGTERM)
    assert proc.wait(30) == 0, proc.output()[-3000:]
    peak = float(proc.output().rsplit("peak RSS ", 1)[1].split(" MiB")[0])
    assert peak < RSS_CAP_MIB, peak
    letters = ws.dead_letters()
    assert len(letters) == 48 and all(len(letter["line_base64"]) > 1_300_000 for letter in letters)
