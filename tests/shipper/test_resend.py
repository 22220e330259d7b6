"""`--resend-dead-letters`: the real shipper and a real local server. A refused line outlives its log file
in the dead letters, and once the cause is fixed it lands exactly once, whatever crash interrupts the resend.

The fixable cause here: some of the SDK's lines carry no ``app_key`` of their own and rely on the shipper's
``appKey``, which was wrong; batches that also hold lines with their own, valid key are accepted, and the
service lists the others under ``rejected``. The operator corrects ``appKey`` and resends.
"""

from __future__ import annotations

import fcntl
import os
import signal
import threading
import time

import pytest

from tests.shipper.harness import (
    Workspace,
    append_lines,
    assert_exactly_once,
    make_line,
    new_ids,
    wait_until,
)
from tests.shipper.ingest_server import APP_KEY, IngestServer

WRONG_KEY = "stacklens_app_" + "W" * 24  # well formed, but no project's key
RETIRED_KEY = "stacklens_app_" + "R" * 24


@pytest.fixture(autouse=True)
def patient_stop(ws: Workspace) -> None:
    """A long shutdown grace: a tracker fsync on a busy disk can outlast the workspace's 3 s, and how a stop
    ends in time is not what these tests are about (a clean stop takes milliseconds either way)."""
    ws.settings["shutdownGrace"] = "20s"
    ws.write_config()


def refuse_some(ws: Workspace, server: IngestServer, relying: int = 6, good: int = 10) -> tuple[set, set]:
    """Deliver ``good`` lines with their own key and ``relying`` lines that rely on the wrong ``appKey``;
    return (good ids, refused ids) once the refused ones are in the dead letters and the shipper stopped."""
    ws.settings["appKey"] = WRONG_KEY
    ws.write_config()
    good_ids, refused_ids = new_ids(good), new_ids(relying)
    for i in range(max(good, relying)):
        append_lines(ws.day(), good_ids[i : i + 1])
        append_lines(ws.day(), refused_ids[i : i + 1], app_key=None)
    proc = ws.start()
    wait_until(lambda: len(ws.dead_letters()) == relying, 15, "the refused lines in the dead letters")
    wait_until(lambda: set(good_ids) <= server.ids(), 15, "the good lines")
    proc.signal(signal.SIGTERM)
    assert proc.wait(30) == 0, proc.output()[-3000:]
    return set(good_ids), set(refused_ids)


def rotate_away(ws: Workspace) -> None:
    """The SDK's file is rotated (renamed) and the rotated copy deleted, as log retention does."""
    rotated = ws.day().with_name(ws.day().name + ".1")
    os.rename(ws.day(), rotated)
    rotated.unlink()
    assert not any(ws.logs.glob("stacklens-*"))


def fix_the_app_key(ws: Workspace, batch_size: int = 2) -> None:
    ws.settings.update(appKey=APP_KEY, batchSize=batch_size)
    ws.write_config()


def test_a_refused_line_outlives_its_log_file_and_lands_once(ws: Workspace, server: IngestServer) -> None:
    good, refused = refuse_some(ws, server)
    rotate_away(ws)
    letters = ws.dead_letters()
    # The whole line is kept, byte for byte, with its reason, time and where it was.
    assert {letter["line"].encode() + b"\n" for letter in letters} == {
        make_line(event_id, app_key=None) for event_id in refused
    }
    assert all(
        letter["reason"]
        == "rejected by the service: Application Not Found: the app key is not a current app key"
        and letter["file"] == ws.day().name
        and letter["offset"] > 0
        and letter["at"].endswith("Z")
        and letter["resends"] == 0
        for letter in letters
    )
    fix_the_app_key(ws)
    first = ws.cli("--resend-dead-letters")
    assert first.returncode == 0, first.stderr
    assert "Dead letters resent: 6 landed, 0 refused again" in first.stderr
    assert first.stderr.count("Batch sent: 2 events") == 3
    assert_exactly_once(server, good | refused)
    assert ws.dead_letters() == []
    requests = server.landed.requests
    second = ws.cli("--resend-dead-letters")
    assert second.returncode == 0 and "No dead letters to resend" in second.stderr, second.stderr
    assert server.landed.requests == requests  # the second run sends nothing
    assert_exactly_once(server, good | refused)


@pytest.mark.parametrize(
    "fault",
    ["after_send:2", "after_resend_answer:2", "before_dead_letter_rewrite", "mid_dead_letter_rewrite"],
)
def test_a_resend_killed_at_any_point_lands_each_line_once(
    ws: Workspace, server: IngestServer, fault: str
) -> None:
    good, refused = refuse_some(ws, server)
    rotate_away(ws)
    fix_the_app_key(ws)
    killed = ws.cli("--resend-dead-letters", fault=fault)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    landed_before = len(server.ids() & refused)
    assert landed_before >= 4  # at least two batches of two had landed when it died
    status = ws.cli("--status")
    assert "a resend was interrupted: run --resend-dead-letters to finish it" in status.stdout
    # Batches are cut differently now, so only the journal can repeat the unanswered one exactly.
    fix_the_app_key(ws, batch_size=3)
    again = ws.cli("--resend-dead-letters")
    assert again.returncode == 0, again.stderr
    assert_exactly_once(server, good | refused)
    assert server.landed.duplicates == 0  # nothing was even offered twice under a new key
    if fault == "after_send:2":
        # The batch answered but never recorded went again under its key: the service landed nothing new.
        assert "Finishing an interrupted resend: 1 batches" in again.stderr
        assert server.landed.key_replays == 1
    else:
        assert server.landed.key_replays == 0  # every answer was in the journal: nothing needed sending
    assert ws.dead_letters() == []
    requests = server.landed.requests
    third = ws.cli("--resend-dead-letters")
    assert third.returncode == 0 and "No dead letters to resend" in third.stderr
    assert server.landed.requests == requests
    assert not list(ws.logs.glob("deadletter.ndjson.tmp"))


def test_a_line_refused_again_stays_with_the_new_reason_until_its_cause_is_fixed(
    ws: Workspace, server: IngestServer
) -> None:
    """Each resend of a line refused again goes under a new key: the service remembers a key's first answer
    for good, so without it the fixed cause would still meet the old refusal."""
    good, relying = refuse_some(ws, server, relying=3, good=3)
    retired = set(new_ids(2))  # written with a key the service does not know (yet)
    append_lines(ws.day(), sorted(retired), app_key=RETIRED_KEY)
    proc = ws.start()
    wait_until(lambda: len(ws.dead_letters()) == 5, 15, "the lines with the unknown key")
    proc.signal(signal.SIGTERM)
    assert proc.wait(30) == 0, proc.output()[-3000:]
    rotate_away(ws)

    # Nothing fixed yet: the whole batch is refused (no line can be attributed) and every line stays.
    unchanged = ws.cli("--resend-dead-letters")
    assert unchanged.returncode == 0, unchanged.stderr
    assert "0 landed, 5 refused again" in unchanged.stderr
    letters = ws.dead_letters()
    assert len(letters) == 5 and all(letter["resends"] == 1 for letter in letters)
    assert all(
        letter["reason"].startswith("refused by the service: Application Not Found") for letter in letters
    )

    # appKey fixed: the lines relying on it land; the two with their own unknown key are refused again.
    fix_the_app_key(ws, batch_size=10)
    fixed = ws.cli("--resend-dead-letters")
    assert fixed.returncode == 0 and "3 landed, 2 refused again" in fixed.stderr, fixed.stderr
    letters = ws.dead_letters()
    assert {letter["resends"] for letter in letters} == {2} and len(letters) == 2
    assert all(
        letter["reason"]
        == "rejected by the service: Application Not Found: the app key is not a current app key"
        for letter in letters
    )
    assert_exactly_once(server, good | relying)

    # That key becomes valid (say, created for the service that wrote them): they land now, once.
    server.behaviour.known_app_keys = (APP_KEY, RETIRED_KEY)
    last = ws.cli("--resend-dead-letters")
    assert last.returncode == 0 and "2 landed, 0 refused again" in last.stderr, last.stderr
    assert ws.dead_letters() == []
    assert_exactly_once(server, good | relying | retired)


def test_a_batch_refused_whole_in_a_2xx_goes_under_a_new_key_once_the_service_is_fixed(
    ws: Workspace, server: IngestServer
) -> None:
    """The service remembers a key's first answer for good. A resend whose every line was refused in a
    2xx must go under a new key next time (each refusal counts into it), or the fixed service would only
    repeat the old refusal."""
    server.behaviour.refuse_lines_with = "unreadable"
    good, odd = new_ids(4), new_ids(2)
    for g, o in zip(good, [*odd, None, None], strict=True):
        append_lines(ws.day(), [g])
        if o:
            with open(ws.day(), "ab") as fh:
                fh.write(make_line(o).replace(b'"boom"', b'"unreadable"'))
    proc = ws.start()
    wait_until(lambda: len(ws.dead_letters()) == 2 and set(good) <= server.ids(), 15, "the refused lines")
    proc.signal(signal.SIGTERM)
    assert proc.wait(30) == 0, proc.output()[-3000:]
    before = ws.cli("--resend-dead-letters")  # the service is not fixed yet
    assert before.returncode == 0 and "0 landed, 2 refused again" in before.stderr, before.stderr
    assert [letter["resends"] for letter in ws.dead_letters()] == [1, 1]
    server.behaviour.refuse_lines_with = None  # the release that reads them
    after = ws.cli("--resend-dead-letters")
    assert after.returncode == 0 and "2 landed, 0 refused again" in after.stderr, after.stderr
    assert server.landed.key_replays == 0
    assert_exactly_once(server, set(good) | set(odd))


def test_lines_that_cannot_go_stay_and_say_why(ws: Workspace, server: IngestServer) -> None:
    ws.settings["maxLineBytes"] = 2048
    ws.write_config()
    with open(ws.day(), "ab") as fh:
        fh.write(b"{this is not json\n")
        fh.write(b'{"v": 1, "payload": "' + b"x" * 4096 + b'"}\n')
    ids = new_ids(3)
    append_lines(ws.day(), ids)
    proc = ws.start()
    wait_until(lambda: set(ids) <= server.ids() and len(ws.dead_letters()) == 2, 15, "delivery")
    proc.signal(signal.SIGTERM)
    assert proc.wait(30) == 0, proc.output()[-3000:]
    letters = {letter["reason"]: letter for letter in ws.dead_letters()}
    assert letters["not valid JSON"]["line"] == "{this is not json"
    long = letters["line longer than 2048 bytes"]
    assert long["whole"] is False and len(long["preview"]) == 200 and "line" not in long
    requests = server.landed.requests
    result = ws.cli("--resend-dead-letters")
    assert result.returncode == 0, result.stderr
    assert (
        "0 landed, 0 refused again (kept with the service's new reason), 2 not resendable "
        "(1 not valid JSON; 1 only its first 200 bytes were kept (longer than maxLineBytes)); 2 left"
    ) in result.stderr
    assert server.landed.requests == requests and len(ws.dead_letters()) == 2


def test_a_resend_beside_a_running_shipper_loses_no_dead_letter(ws: Workspace, server: IngestServer) -> None:
    """The delivery loop keeps appending dead letters while resends rewrite the file: none is lost, and
    every refused line lands exactly once in the end. The operator fixed a copy of the configuration and
    resends before reloading the running shipper, which keeps the wrong appKey meanwhile."""
    ws.settings.update(appKey=APP_KEY, batchSize=5)
    ws.write_config()
    fixed = ws.root / "fixed.yaml"
    os.replace(ws.config, fixed)
    ws.settings.update(appKey=WRONG_KEY, batchSize=50)
    ws.write_config()
    good: set[str] = set()
    relying: set[str] = set()
    stop = threading.Event()

    def writer() -> None:
        # Two lines relying on appKey, then three with their own key, in one write: every batch holds a
        # line the service takes, so it is accepted and lists the others under `rejected`.
        fd = os.open(ws.day(), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            while not stop.is_set():
                r, g = new_ids(2), new_ids(3)
                os.write(fd, b"".join([*(make_line(i, app_key=None) for i in r), *(make_line(i) for i in g)]))
                relying.update(r)
                good.update(g)
                time.sleep(0.05)
        finally:
            os.close(fd)

    proc = ws.start()
    thread = threading.Thread(target=writer)
    thread.start()
    try:
        for _ in range(4):
            time.sleep(0.2)
            result = ws.cli("--resend-dead-letters", config=fixed)
            assert result.returncode == 0, result.stderr
    finally:
        stop.set()
        thread.join()
    wait_until(lambda: good <= server.ids(), 15, "the good lines")
    proc.signal(signal.SIGTERM)
    assert proc.wait(30) == 0, proc.output()[-3000:]
    assert relying & server.ids(), "some resends ran while lines were still being refused"
    final = ws.cli("--resend-dead-letters", config=fixed)
    assert final.returncode == 0, final.stderr
    assert ws.dead_letters() == []
    assert_exactly_once(server, good | relying)


def test_a_resend_that_cannot_reach_the_service_stops_and_the_next_one_finishes(
    ws: Workspace, server: IngestServer
) -> None:
    good, refused = refuse_some(ws, server, relying=4, good=4)
    fix_the_app_key(ws)
    server.stop()
    down = ws.cli("--resend-dead-letters")
    assert down.returncode == 1
    assert "Retry attempt 3/3 (Connection refused" in down.stderr
    assert "Dead letters not all resent: Connection refused after 3 retries" in down.stderr
    assert len(ws.dead_letters()) == 4
    server.start()
    up = ws.cli("--resend-dead-letters")
    assert up.returncode == 0, up.stderr
    assert "Finishing an interrupted resend: 1 batches" in up.stderr
    assert "Dead letters resent: 4 landed, 0 refused again" in up.stderr
    assert ws.dead_letters() == []
    assert_exactly_once(server, good | refused)


def test_one_resend_at_a_time(ws: Workspace, server: IngestServer) -> None:
    refuse_some(ws, server, relying=2, good=2)
    fd = os.open(ws.logs / "deadletter.journal", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # as a running resend holds it
        busy = ws.cli("--resend-dead-letters")
    finally:
        os.close(fd)
    assert busy.returncode == 1
    assert f"another stacklens-shipper --resend-dead-letters is running on {ws.logs}" in busy.stderr
    assert len(ws.dead_letters()) == 2
    help_text = ws.cli("--help").stdout
    assert "--resend-dead-letters" in help_text and "deadletter.ndjson" in help_text
