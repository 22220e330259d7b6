"""Reading complete lines, passing over bad ones, and file identity (real files)."""

from __future__ import annotations

import os
from pathlib import Path

from shipper.files import Tail, list_log_files
from tests.shipper.harness import make_line

MIB = 1024 * 1024


def test_only_complete_lines_are_read(tmp_path: Path) -> None:
    path = tmp_path / "stacklens-2026-11-21.log"
    line = make_line("a" * 32)
    path.write_bytes(line[:10])
    tail = Tail.open(path)
    assert tail.read_lines(100, MIB, MIB) == []
    with open(path, "ab") as fh:
        fh.write(line[10:-1])
    assert tail.read_lines(100, MIB, MIB) == []
    with open(path, "ab") as fh:
        fh.write(b"\n" + line[:5])
    lines = tail.read_lines(100, MIB, MIB)
    assert [item.data for item in lines] == [line] and tail.read_pos == len(line)


def test_bad_lines_are_passed_over_with_their_offsets(tmp_path: Path) -> None:
    path = tmp_path / "stacklens-2026-11-21.log"
    good = make_line("b" * 32)
    long = b'{"x": "' + b"y" * (3 * MIB) + b'"}\n'
    path.write_bytes(good + b"\xff\xfe not utf-8\n" + b"[1, 2]\n" + long + b"\n" + good)
    tail = Tail.open(path)
    got = []
    while True:
        batch = tail.read_lines(100, MIB, MIB)
        if not batch:
            break
        got.extend(batch)
    problems = [item.problem for item in got]
    assert problems == ["", "not valid UTF-8", "not a JSON object", f"line longer than {MIB} bytes", "", ""]
    assert got[3].start == len(good) + 13 + 7 and got[3].end - got[3].start == len(long)
    assert [item.data for item in got if item.data] == [good, good]
    assert tail.read_pos == path.stat().st_size


def test_unfinished_overlong_line_is_not_held_in_memory(tmp_path: Path) -> None:
    path = tmp_path / "stacklens-2026-11-21.log"
    path.write_bytes(b"z" * (5 * MIB))
    tail = Tail.open(path)
    assert tail.read_lines(100, MIB, MIB) == []
    assert len(tail.buffer) <= MIB and tail.skipped >= MIB
    with open(path, "ab") as fh:
        fh.write(b"\n" + make_line("c" * 32))
    got = tail.read_lines(100, MIB, MIB)
    assert got[0].data is None and got[0].end == 5 * MIB + 1 and got[1].data is not None


def test_identity_catches_truncation_rewrite_and_inode_reuse(tmp_path: Path) -> None:
    path = tmp_path / "stacklens-2026-11-21.log"
    path.write_bytes(make_line("d" * 32) * 10)
    tail = Tail.open(path)
    tail.read_lines(5, MIB, MIB)
    tail.committed = tail.read_pos
    entry = {
        "dev": tail.dev,
        "ino": tail.ino,
        "head_len": tail.head_len,
        "head_hash": tail.head_hash,
        "offset": tail.committed,
        "tail_hash": tail.tail_hash(tail.committed),
    }
    assert Tail.open(path).matches(entry)
    assert not tail.changed_under_us()
    # Rewritten in place with the same first line: the bytes before the offset differ.
    data = bytearray(path.read_bytes())
    data[tail.read_pos - 10] ^= 1
    with open(path, "r+b") as fh:
        fh.write(bytes(data))
    assert not Tail.open(path).matches(entry) and tail.changed_under_us()
    os.truncate(path, 10)
    assert not Tail.open(path).matches(entry)


def test_listing_is_date_ordered_and_ignores_other_files(tmp_path: Path) -> None:
    for name in ("stacklens-2026-11-22.log", "stacklens-2026-11-21.log", "tracker.json", "other.log"):
        (tmp_path / name).write_bytes(b"")
    assert [p.name for p in list_log_files(tmp_path)] == [
        "stacklens-2026-11-21.log",
        "stacklens-2026-11-22.log",
    ]
