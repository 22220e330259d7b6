"""The order in which `make test`'s workers take the test files: the longest first, by measured durations.

`make test` runs ``-n 3 --dist loadfile --no-loadscope-reorder``: a worker takes a whole file at a time, in
the order of the collection, and another file when it has two tests left. Taking the longest files first
leaves the short ones for the end, where they fill the gaps, so the workers finish within a short file of
each other (without ``--no-loadscope-reorder`` pytest-xdist orders the files by their number of tests
instead, and the minute-long end-to-end files, with one to three tests each, came last).

The seconds of each file (setup, call and teardown of its tests, one worker) are kept in
``tests/durations.json``; ``pytest --record-durations …`` updates the entries of the files it ran. A file the
record does not know yet is guessed from what it holds: :data:`SLOW_FILE_SECONDS` if a test of it is marked
``slow``, else :data:`SECONDS_PER_TEST` a test.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest

DURATIONS = Path(__file__).resolve().parent / "durations.json"
SLOW_FILE_SECONDS = 60.0
SECONDS_PER_TEST = 0.5


def file_of(nodeid: str) -> str:
    """``tests/api/test_x.py`` of ``tests/api/test_x.py::test_y[a]``."""
    return nodeid.split("::", 1)[0]


def recorded(path: Path = DURATIONS) -> dict[str, float]:
    """The recorded seconds of each file, by path from the repository root (empty without a record)."""
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        return {}
    return {str(name): float(seconds) for name, seconds in data.items()}


def estimated(items: list[pytest.Item], known: dict[str, float]) -> dict[str, float]:
    """Seconds each collected file is expected to take: recorded, else guessed."""
    counts: dict[str, int] = defaultdict(int)
    slow: set[str] = set()
    for item in items:
        name = file_of(item.nodeid)
        counts[name] += 1
        if item.get_closest_marker("slow"):
            slow.add(name)
    return {
        name: known.get(name, SLOW_FILE_SECONDS if name in slow else SECONDS_PER_TEST * count)
        for name, count in counts.items()
    }


def longest_files_first(items: list[pytest.Item], known: dict[str, float]) -> None:
    """Sort ``items`` in place: whole files, the longest first; each file's tests keep their order."""
    seconds = estimated(items, known)
    first_seen = {name: index for index, name in reversed(list(enumerate(file_of(i.nodeid) for i in items)))}
    items.sort(key=lambda item: (-seconds[file_of(item.nodeid)], first_seen[file_of(item.nodeid)]))


class DurationRecorder:
    """Adds up the reported phases of each file's tests and merges them into the record at the end of the
    run (on the controller under pytest-xdist, which receives every worker's reports)."""

    def __init__(self, path: Path = DURATIONS) -> None:
        self.path = path
        self.seconds: dict[str, float] = defaultdict(float)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.seconds[file_of(report.nodeid)] += report.duration

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if not self.seconds:
            return
        merged = recorded(self.path)
        merged.update({name: round(seconds, 1) for name, seconds in self.seconds.items()})
        ordered = dict(sorted(merged.items(), key=lambda entry: (-entry[1], entry[0])))
        self.path.write_text(json.dumps(ordered, indent=1) + "\n")
