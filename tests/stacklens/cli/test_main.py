"""The `stacklens` command's parser: listing the commands (`stacklens --help`, and the parser every command
builds first) loads no store, framework or engine; each command loads what it uses when it runs. Each CLI call
used to load the control store's ORM and the demo organization's modules (~0.4 s) before parsing its
arguments."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
HEAVY = (
    "sqlalchemy",
    "alembic",
    "stacklens.control.models",
    "dagster",
    "fastapi",
    "chdb",
    "clickhouse_connect",
)


def test_building_the_parser_loads_no_store_framework_or_engine() -> None:
    code = (
        "import sys; from stacklens.cli.main import build_parser; build_parser(); "
        f"print(sorted({{m.split('.')[0] if not m.startswith('stacklens') else m for m in sys.modules"
        f" if m.startswith({HEAVY!r})}}))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "[]", done.stdout
