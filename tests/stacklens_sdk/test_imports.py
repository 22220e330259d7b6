"""The SDK is installed into applications: it stays free of the server's code and its dependencies.

An application that adds ``stacklens_sdk`` gets sentry-sdk and the shared contract
(``stacklens_contract``), nothing of the service (the core, the adapters, the warehouse client, FastAPI,
Dagster, …). Checked twice: statically over every module's imports, and by importing the SDK in a fresh
interpreter and listing what it loaded."""

from __future__ import annotations

import json
import subprocess
import sys
import sysconfig
from pathlib import Path

from tests.static_imports import STANDARD_LIBRARY, top_level_imports

ROOT = Path(__file__).resolve().parents[2]
SDK = ROOT / "stacklens_sdk"
ALLOWED_THIRD_PARTY = ("sentry_sdk", "stacklens_sdk", "stacklens_contract")
# The application's own web framework, imported only inside the helper that builds a route for it (the
# tunnel's ``starlette_route``): an application that never asks for that route never needs the framework.
APPLICATION_FRAMEWORKS_IN_FUNCTIONS = ("starlette",)
SERVER_PACKAGES = (
    "stacklens",
    "api",
    "dashboards",
    "pipelines",
    "shipper",
    "fastapi",
    "starlette",
    "dagster",
    "clickhouse_connect",
    "chdb",
    "sqlalchemy",
    "plotly",
    "polars",
)


def _forbidden(path: Path) -> list[str]:
    allowed = STANDARD_LIBRARY | set(ALLOWED_THIRD_PARTY)
    anywhere = top_level_imports(path) - allowed - set(APPLICATION_FRAMEWORKS_IN_FUNCTIONS)
    at_module_level = top_level_imports(path, module_level_only=True) - allowed
    return sorted(anywhere | at_module_level)


def test_every_sdk_module_imports_only_the_standard_library_sentry_and_the_contract() -> None:
    modules = sorted(SDK.rglob("*.py"))
    assert len(modules) >= 8
    problems = [f"{path.relative_to(ROOT)} imports {name}" for path in modules for name in _forbidden(path)]
    assert problems == []


def test_importing_the_sdk_loads_nothing_of_the_server() -> None:
    code = (
        "import json, sys\n"
        "import stacklens_sdk, stacklens_sdk.client, stacklens_sdk.transport, stacklens_sdk.logfile\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=sysconfig.get_paths()["data"],
    )
    loaded = {name.split(".")[0] for name in json.loads(out.stdout)}
    assert "stacklens_sdk" in loaded and "sentry_sdk" in loaded
    assert sorted(loaded & set(SERVER_PACKAGES)) == []


def test_the_static_check_can_fail(tmp_path: Path) -> None:
    planted = tmp_path / "m.py"
    planted.write_text("from stacklens.ingest.writer import write\nimport fastapi\nimport starlette\n")
    assert _forbidden(planted) == ["fastapi", "stacklens", "starlette"]
    lazy = tmp_path / "lazy.py"
    lazy.write_text("import json\ndef route():\n    from starlette.routing import Route\n    import chdb\n")
    assert _forbidden(lazy) == ["chdb"]
