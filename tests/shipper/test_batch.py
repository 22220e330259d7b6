"""Lines the service lists under ``rejected`` in a 2xx answer become dead letters, kept whole (real files)."""

from __future__ import annotations

import json
from pathlib import Path

from shipper.batch import Batch
from shipper.deadletters import DeadLetter, DeadLetterFile
from shipper.files import Tail
from tests.shipper.harness import make_line

MIB = 1024 * 1024


def test_rejected_lines_are_numbered_as_sent_and_dead_lettered_with_the_reason(tmp_path: Path) -> None:
    path = tmp_path / "stacklens-2026-11-21.log"
    lines = [make_line("a" * 32), b"not json at all\n", make_line("b" * 32), make_line("c" * 32)]
    path.write_bytes(b"".join(lines))
    tail = Tail.open(path)
    batch = Batch(tail, [])
    batch.add(tail.read_lines(100, MIB, MIB))
    assert len(batch.lines) == 3, "the line that is not JSON is passed over, never sent"
    # The body holds the three sent lines; the service numbers them 1..3, so its line 2 is file line 3.
    reasons = batch.refuse_lines(
        [
            {"line": 2, "error": "Application Not Found: the app key is not a current app key"},
            {"line": 9},
            "x",
        ]
    )
    assert reasons == ["Application Not Found: the app key is not a current app key"]
    assert batch.lines == [lines[0], lines[3]]
    dead = DeadLetterFile(tmp_path, MIB)
    letters = [DeadLetter.of(tail, item) for item in batch.items if item.data is None and item.problem]
    assert dead.append(letters).kept == 2
    records = [json.loads(x) for x in dead.path.read_text().splitlines()]
    assert [(r["offset"], r["reason"]) for r in records] == [
        (len(lines[0]), "not valid JSON"),
        (
            len(lines[0]) + len(lines[1]),
            "rejected by the service: Application Not Found: the app key is not a current app key",
        ),
    ]
    # The whole line, without its newline: it outlives the log file.
    assert [r["line"] for r in records] == [lines[1][:-1].decode(), lines[2][:-1].decode()]
    assert [letter.line for _, letter in dead.records() if letter] == [lines[1][:-1], lines[2][:-1]]
    tail.close()
