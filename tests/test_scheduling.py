"""`make test`'s order of the test files (tests/scheduling.py): whole files, the longest first, by recorded
seconds or, for a file without a record, by what it holds; the record merged by ``--record-durations``."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests import scheduling

ROOT = Path(__file__).resolve().parents[1]


@dataclass
class _Item:
    nodeid: str
    slow: bool = False

    def get_closest_marker(self, name: str) -> object | None:
        return object() if name == "slow" and self.slow else None


def _files(items: list[_Item]) -> list[str]:
    order: list[str] = []
    for item in items:
        name = scheduling.file_of(item.nodeid)
        if not order or order[-1] != name:
            order.append(name)
    return order


def test_whole_files_longest_first_each_in_its_own_order() -> None:
    items = [
        _Item("tests/a.py::one"),
        _Item("tests/b.py::one"),
        _Item("tests/a.py::two"),
        _Item("tests/c.py::one", slow=True),
        _Item("tests/d.py::one[x]"),
        _Item("tests/d.py::one[y]"),
    ]
    scheduling.longest_files_first(items, {"tests/b.py": 30.0, "tests/a.py": 2.0})
    # c: unrecorded but slow (60 s); b: 30 s recorded; a: 2 s recorded; d: unrecorded, 2 tests (1 s).
    assert _files(items) == ["tests/c.py", "tests/b.py", "tests/a.py", "tests/d.py"]
    assert [i.nodeid for i in items if i.nodeid.startswith("tests/a.py")] == [
        "tests/a.py::one",
        "tests/a.py::two",
    ]
    assert [i.nodeid for i in items][-2:] == ["tests/d.py::one[x]", "tests/d.py::one[y]"]


def test_equal_estimates_keep_the_collection_order() -> None:
    items = [_Item("tests/z.py::t"), _Item("tests/y.py::t")]
    scheduling.longest_files_first(items, {})
    assert _files(items) == ["tests/z.py", "tests/y.py"]


def test_the_recorder_merges_into_the_record(tmp_path: Path) -> None:
    record = tmp_path / "durations.json"
    record.write_text(json.dumps({"tests/old.py": 5.0, "tests/a.py": 1.0}))
    recorder = scheduling.DurationRecorder(record)
    for nodeid, seconds in [("tests/a.py::x", 2.0), ("tests/a.py::x", 0.5), ("tests/b.py::y", 9.0)]:
        recorder.pytest_runtest_logreport(
            pytest.TestReport(nodeid, ("tests/a.py", 1, "x"), {}, "passed", None, "call", duration=seconds)
        )
    recorder.pytest_sessionfinish(None)
    assert json.loads(record.read_text()) == {"tests/b.py": 9.0, "tests/old.py": 5.0, "tests/a.py": 2.5}
    assert list(scheduling.recorded(record)) == ["tests/b.py", "tests/old.py", "tests/a.py"]


def test_make_test_keeps_the_collection_order() -> None:
    """xdist's default reorders the files by their number of tests, which undoes the order above."""
    makefile = (ROOT / "Makefile").read_text()
    (line,) = [line for line in makefile.splitlines() if line.startswith("PYTEST_ARGS ?=")]
    assert "--dist loadfile" in line and "--no-loadscope-reorder" in line


def test_the_record_names_files_that_exist() -> None:
    known = scheduling.recorded()
    assert known, "tests/durations.json is missing or empty"
    assert all(seconds >= 0 for seconds in known.values())
    gone = [name for name in known if not (ROOT / name).is_file()]
    # A file renamed or removed since the record was made only loses its place (it is estimated).
    assert len(gone) <= len(known) // 10, gone
