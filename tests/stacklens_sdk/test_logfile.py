"""The log writer on real files: atomic appends, daily files, modes, limits and failures."""

from __future__ import annotations

import json
import logging
import multiprocessing
import os
import shutil
import stat
import subprocess
import sys
import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest

from stacklens_sdk.logfile import FILE_MODE, LineTooLarge, LogWriter, WriteFailed, encode_line, format_ts
from tests.stacklens_sdk.helpers import read_lines

KEY = "stacklens_app_" + "A1" * 12


def test_line_format_matches_the_contract() -> None:
    when = datetime(2026, 11, 21, 19, 22, 3, 123456, tzinfo=UTC)
    line = encode_line("event", KEY, {"message": "héllo", "n": float("nan")}, when)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert line.startswith(
        b'{"v": 1, "type": "event", "app_key": "' + KEY.encode() + b'", "ts": "2026-11-21T19:22:03.123Z"'
    )
    parsed = json.loads(line)
    assert parsed["payload"] == {"message": "héllo", "n": None}  # UTF-8 kept, NaN (not JSON) nulled
    assert "héllo".encode() in line
    assert format_ts(datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)) == "2026-01-02T03:04:05.000Z"


def test_file_is_chosen_by_utc_date_at_write_time_and_created_0640(tmp_path: Path) -> None:
    old_umask = os.umask(0o077)  # a strict umask must not change the file mode
    try:
        writer = LogWriter(str(tmp_path))
        writer.write(
            "event", KEY, {"n": 1}, now=lambda: datetime(2026, 11, 21, 23, 59, 59, 999000, tzinfo=UTC)
        )
        writer.write("event", KEY, {"n": 2}, now=lambda: datetime(2026, 11, 22, 0, 0, 0, 1000, tzinfo=UTC))
    finally:
        os.umask(old_umask)
    first, second = tmp_path / "stacklens-2026-11-21.log", tmp_path / "stacklens-2026-11-22.log"
    assert [json.loads(x)["payload"]["n"] for x in first.read_text().splitlines()] == [1]
    assert [json.loads(x)["payload"]["n"] for x in second.read_text().splitlines()] == [2]
    assert stat.S_IMODE(first.stat().st_mode) == FILE_MODE == 0o640
    assert json.loads(second.read_text())["ts"] == "2026-11-22T00:00:00.001Z"


def test_line_over_the_limit_is_refused_whole(tmp_path: Path) -> None:
    writer = LogWriter(str(tmp_path), max_line_bytes=2048)
    writer.write("event", KEY, {"small": "x"})
    with pytest.raises(LineTooLarge):
        writer.write("event", KEY, {"big": "x" * 4096})
    assert [line["payload"] for line in read_lines(tmp_path)] == [{"small": "x"}]


def test_threads_never_interleave(tmp_path: Path) -> None:
    writer = LogWriter(str(tmp_path))
    pad = "z" * 5000  # longer than a pipe buffer page, so interleaving would show

    def work(t: int) -> None:
        for i in range(200):
            writer.write("event", KEY, {"t": t, "i": i, "pad": pad})

    threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    lines = read_lines(tmp_path)
    assert len(lines) == 1600
    assert {(line["payload"]["t"], line["payload"]["i"]) for line in lines} == {
        (t, i) for t in range(8) for i in range(200)
    }


def _process_writer(path: str, worker: int) -> None:
    writer = LogWriter(path)
    for i in range(300):
        writer.write("transaction", KEY, {"w": worker, "i": i, "pad": "q" * (100 * (i % 50))})


def test_processes_never_interleave(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_process_writer, args=(str(tmp_path), w)) for w in range(4)]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(60)
        assert proc.exitcode == 0
    lines = read_lines(tmp_path)
    assert len(lines) == 1200
    assert len({(line["payload"]["w"], line["payload"]["i"]) for line in lines}) == 1200


def test_removed_file_and_directory_are_recreated_and_reported_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    storage = tmp_path / "logs"
    writer = LogWriter(str(storage))
    writer.write("event", KEY, {"n": 1})
    shutil.rmtree(storage)  # e.g. a cleanup job removes the directory under a running application
    writer.write("event", KEY, {"n": 2})
    assert [line["payload"]["n"] for line in read_lines(storage)] == [2]
    assert stat.S_IMODE(storage.stat().st_mode) & 0o007 == 0, "recreated without world access"

    # Replace the directory by a file: now it cannot be recreated. One report, however many writes fail.
    shutil.rmtree(storage)
    storage.write_text("not a directory")
    with caplog.at_level(logging.WARNING, logger="stacklens_sdk"):
        for _ in range(3):
            with pytest.raises(WriteFailed):
                writer.write("event", KEY, {"n": 3})
        storage.unlink()
        writer.write("event", KEY, {"n": 4})
    errors = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 1 and "Cannot write to the log directory" in errors[0].getMessage()
    assert any("again" in r.getMessage() for r in caplog.records if r.levelno == logging.WARNING)
    assert [line["payload"]["n"] for line in read_lines(storage)] == [4]


FULL_DISK_SCRIPT = """
import resource, signal, sys, json
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # writes past the limit then fail with EFBIG like a full disk
resource.setrlimit(resource.RLIMIT_FSIZE, (6000, 6000))
import stacklens_sdk
stacklens_sdk.init(app_key=sys.argv[2], storage_path=sys.argv[1])
for i in range(40):
    stacklens_sdk.capture_message("message %d %s" % (i, "x" * 200))
stacklens_sdk.flush()
print(json.dumps({k[0] + "/" + k[1]: v for k, v in stacklens_sdk.current().transport.pending_lost_events().items()}))
print("still running")
"""


def test_full_disk_never_raises_into_the_application(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", FULL_DISK_SCRIPT, str(tmp_path), KEY],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.splitlines()
    assert out[-1] == "still running"
    lost = json.loads(out[-2])
    assert lost.get("error/send_error", 0) >= 30  # counted, kept for the next client report
    assert proc.stderr.count("Cannot write to the log directory") == 1
    raw = next(tmp_path.glob("stacklens-*.log")).read_bytes()
    assert len(raw) <= 6000
    # A line cut by the full disk is ended, never glued to the next one: all other lines parse.
    good = [line for line in raw.split(b"\n") if line]
    parsed = []
    for line in good:
        try:
            parsed.append(json.loads(line))
        except ValueError:
            assert line is good[-1], "only the last line may be torn"
    assert all(p["type"] == "event" for p in parsed) and len(parsed) >= 1
