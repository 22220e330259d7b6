"""`make test` runs mypy beside the suite (tests/typed_suite.py): a type error stops the suite at once and
fails the run with mypy's report; a clean type check leaves the suite's own exit status."""

from __future__ import annotations

import sys
import time

import pytest

from tests import typed_suite


def _python(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def test_a_type_error_stops_the_suite_and_fails(capsys: pytest.CaptureFixture[str]) -> None:
    started = time.monotonic()
    status = typed_suite.main(
        [],
        type_check=_python("print('app.py:1: error: bad type'); raise SystemExit(1)"),
        suite_command=_python("import time; time.sleep(120)"),
    )
    assert status == 1
    assert time.monotonic() - started < 20  # interrupted, not waited for
    out = capsys.readouterr().out
    assert "app.py:1: error: bad type" in out and "mypy failed (exit 1): the suite is stopped" in out


def test_a_clean_type_check_leaves_the_suites_status(capsys: pytest.CaptureFixture[str]) -> None:
    status = typed_suite.main(
        ["3"],
        type_check=_python("print('Success: no issues found')"),
        suite_command=_python("import sys; raise SystemExit(int(sys.argv[1]))"),
    )
    assert status == 3
    assert "Success: no issues found" in capsys.readouterr().out
