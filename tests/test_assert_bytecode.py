"""The test modules' rewritten bytecode written ahead (tests/assert_bytecode.py) is what pytest itself loads:
a module written there fails with pytest's rewritten message, and an edited module is not read from it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from _pytest.assertion.rewrite import PYC_TAIL, _read_pyc, get_cache_dir

from tests import assert_bytecode

TESTS = Path(__file__).resolve().parent


def test_every_module_pytest_rewrites_is_listed() -> None:
    listed = set(assert_bytecode.modules())
    assert TESTS / "conftest.py" in listed
    assert TESTS / "shared_fixtures.py" in listed  # named by the root conftest's pytest_plugins
    assert Path(__file__).resolve() in listed
    assert TESTS / "scheduling.py" not in listed  # a helper: imported as any module, not rewritten


def test_pytest_loads_the_written_rewrite_and_not_a_stale_one(tmp_path: Path) -> None:
    module = tmp_path / "test_written.py"
    module.write_text("def test_lists():\n    seen = [1, 2]\n    assert seen == [1, 3]\n")
    assert_bytecode.write(module)
    cached = get_cache_dir(module) / f"test_written{PYC_TAIL}"
    assert _read_pyc(module, cached) is not None  # pytest's own reader takes it
    failed = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(module)],
        cwd=tmp_path,
        env={"PYTHONDONTWRITEBYTECODE": "1", "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "At index 1 diff: 2 != 3" in failed.stdout, failed.stdout[-2000:]  # the rewritten assert
    module.write_text("def test_lists():\n    assert True\n")
    assert _read_pyc(module, cached) is None  # out of date: pytest rewrites the edited module itself
