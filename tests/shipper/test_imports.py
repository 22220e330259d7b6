"""The shipper installs with the light base: importing it must not pull in server-side packages — checked by
importing it in a fresh interpreter, and statically over every module (a lazy import inside a function
too)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from tests.static_imports import imports_beyond

ROOT = Path(__file__).parents[2]
# What `pip install stacklens[shipper]` brings, and the shared contract.
ALLOWED = {"shipper", "stacklens_contract", "httpx", "yaml", "zstandard"}
SERVER_SIDE = (
    "stacklens",
    "api",
    "fastapi",
    "sqlalchemy",
    "clickhouse_connect",
    "chdb",
    "pydantic",
    "dagster",
    "uvicorn",
)


def test_shipper_imports_nothing_server_side() -> None:
    code = (
        "import sys, json; import shipper, shipper.cli, shipper.agent, shipper.status, shipper.resend;"
        "print(json.dumps(sorted(m.split('.')[0] for m in sys.modules)))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=Path(__file__).parents[2],
        check=True,
    )
    loaded = set(json.loads(result.stdout))
    assert "httpx" in loaded and "shipper" in loaded
    assert not loaded & set(SERVER_SIDE), loaded & set(SERVER_SIDE)


def test_every_shipper_module_imports_only_the_standard_library_and_its_light_dependencies() -> None:
    shipper = ROOT / "shipper"
    assert len(list(shipper.rglob("*.py"))) >= 5
    assert imports_beyond(shipper, ALLOWED) == []


def test_the_static_check_finds_a_lazy_server_import(tmp_path: Path) -> None:
    """The check above can fail: a copy of the shipper whose agent imports FastAPI and the core inside a
    function (never run at import, so the fresh-interpreter test cannot see it) is refused, naming both."""
    copy = tmp_path / "shipper"
    shutil.copytree(ROOT / "shipper", copy, ignore=shutil.ignore_patterns("__pycache__"))
    agent = copy / "agent.py"
    lazy = "\n\ndef _lazy() -> None:\n    import fastapi\n    from stacklens.settings import Settings\n"
    agent.write_text(agent.read_text(encoding="utf-8") + lazy, encoding="utf-8")
    assert imports_beyond(copy, ALLOWED) == [
        "shipper/agent.py imports fastapi",
        "shipper/agent.py imports stacklens",
    ]
