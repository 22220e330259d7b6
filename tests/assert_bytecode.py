"""Writes pytest's assertion-rewritten bytecode of the test modules ahead, on every core, before the workers
start.

pytest rewrites the asserts of every test module and conftest.py it imports, and caches the result beside the
module — unless ``PYTHONDONTWRITEBYTECODE`` is set, as on our CI machines. There, each of the suite's workers
(each collects every module) rewrote all of them again: ~11 CPU-s a worker, a third of a worker's collection.
pytest reads a cached rewrite whatever that variable says, and checks it against the source's hash, so a
module edited later is rewritten as usual. Run by ``make test`` (``python -m tests.assert_bytecode``).

The cache is pytest's own format, written with pytest's own rewriter: what a worker loads is what it would
have made. Should a pytest release move these helpers, this says so and writes nothing; the suite runs as
before.
"""

from __future__ import annotations

import ast
import os
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def modules(root: Path = TESTS) -> list[Path]:
    """The modules pytest rewrites when it collects the suite: the test files, the conftest files and the
    plugins the root conftest names."""
    found = {
        path for path in root.rglob("*.py") if path.name == "conftest.py" or path.name.startswith("test_")
    }
    found.update(root.parent / (name.replace(".", "/") + ".py") for name in plugins(root / "conftest.py"))
    return sorted(found)


def plugins(conftest: Path) -> list[str]:
    """The modules a conftest's ``pytest_plugins = [...]`` names."""
    for node in ast.parse(conftest.read_bytes()).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == "pytest_plugins" for target in node.targets
        ):
            return (
                [str(ast.literal_eval(node.value))]
                if isinstance(node.value, ast.Constant)
                else list(ast.literal_eval(node.value))
            )
    return []


def write(path: Path) -> None:
    from _pytest.assertion.rewrite import PYC_TAIL, _rewrite_test, _write_pyc_fp, get_cache_dir

    source_hash, code = _rewrite_test(path, None)  # no config: pytest's defaults
    cache = get_cache_dir(path)
    cache.mkdir(exist_ok=True)
    target = cache / (path.name[:-3] + PYC_TAIL)
    partial = target.with_name(f"{target.name}.{os.getpid()}")
    with open(partial, "wb") as out:
        _write_pyc_fp(out, source_hash, code)
    os.replace(partial, target)  # a worker never reads half a file


def main() -> int:
    try:
        from _pytest.assertion.rewrite import (  # noqa: F401  # present in this pytest?
            PYC_TAIL,
            _rewrite_test,
            _write_pyc_fp,
            get_cache_dir,
        )
    except ImportError as missing:
        print(f"tests.assert_bytecode: not written ({missing}); the workers rewrite the modules themselves")
        return 0
    with ProcessPoolExecutor(os.cpu_count() or 1) as pool:
        list(pool.map(write, modules(), chunksize=16))
    return 0


if __name__ == "__main__":
    sys.exit(main())
