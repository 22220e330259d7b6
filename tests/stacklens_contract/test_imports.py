"""The contract is imported by the shipper and the SDK on application hosts: standard library only —
checked by importing it without site-packages, and statically over every module (a lazy import inside a
function too)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from tests.static_imports import imports_beyond

ROOT = Path(__file__).parents[2]
ALLOWED = {"stacklens_contract"}
# -S: no site-packages at all, so a third-party import cannot even succeed; the repository root is the path.
CODE = """
import sys, json
sys.path.insert(0, '.')
before = set(sys.modules)
import stacklens_contract.keys, stacklens_contract.secret_shapes, stacklens_contract.words
print(json.dumps(sorted({m.split('.')[0] for m in set(sys.modules) - before})))
"""


def test_importing_the_contract_loads_only_the_standard_library() -> None:
    result = subprocess.run(
        [sys.executable, "-I", "-S", "-c", CODE],
        capture_output=True,
        text=True,
        cwd=Path(__file__).parents[2],
        check=True,
    )
    loaded = set(json.loads(result.stdout))
    assert "stacklens_contract" in loaded
    assert not loaded - {"stacklens_contract"} - set(sys.stdlib_module_names)


def test_every_contract_module_imports_only_the_standard_library() -> None:
    contract = ROOT / "stacklens_contract"
    assert len(list(contract.rglob("*.py"))) >= 3
    assert imports_beyond(contract, ALLOWED) == []


def test_the_static_check_finds_a_lazy_third_party_import(tmp_path: Path) -> None:
    """The check above can fail: a copy of the contract with a third-party import inside a function (which
    importing the module never runs) is refused, naming the module and the package."""
    copy = tmp_path / "stacklens_contract"
    shutil.copytree(ROOT / "stacklens_contract", copy, ignore=shutil.ignore_patterns("__pycache__"))
    keys = copy / "keys.py"
    keys.write_text(
        keys.read_text(encoding="utf-8") + "\n\ndef _lazy() -> None:\n    import httpx\n", encoding="utf-8"
    )
    assert imports_beyond(copy, ALLOWED) == ["stacklens_contract/keys.py imports httpx"]
