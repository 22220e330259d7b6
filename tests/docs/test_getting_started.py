"""docs/getting-started.md, run as a new user would: its install commands work from this checkout (the
package is on no registry), and its organization, shipper and SDK commands do what the guide says.

The commands are taken from the guide's own code blocks, with the guide's placeholder paths mapped to
temporary ones, so a guide that drifts from the product fails here. The server's fresh venv borrows the
dependencies this run's venv already installed from the same requirements (tests/docs/lent_packages.py: only
the server extra's closure, so a requirement missing from it still fails); pip still resolves them, builds
StackLens from the clone and installs it. The application host's small base install runs in full.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.docs.lent_packages import lend

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "getting-started.md"
BIN = Path(sys.executable).parent

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", GUIDE.read_text(), flags=re.S)


def commands(language: str = "sh") -> list[str]:
    """Every command line of the guide's shell blocks, comments stripped."""
    lines = []
    for block in blocks(language):
        for line in block.splitlines():
            line = line.split("  #")[0].strip()
            if line and not line.startswith("#"):
                lines.append(line)
    return lines


# The guide's pip commands run as written; pip only skips byte-compiling what it installs (StackLens' own
# ~1,000 modules, compiled on import instead when a command needs them): nothing the guide's steps check
# depends on it.
NO_COMPILE = {"PIP_NO_COMPILE": "1"}


def requirements(extra: str) -> list[str]:
    """The package's requirements from pyproject.toml: the base install's and ``extra``'s."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return [*project["dependencies"], *project["optional-dependencies"][extra]]


def run_sh(line: str, mapping: dict[str, str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    for placeholder, real in mapping.items():
        line = line.replace(placeholder, real)
    return subprocess.run(["bash", "-c", line], capture_output=True, text=True, env=env, timeout=600)


def test_no_install_command_asks_a_registry_for_stacklens() -> None:
    for line in commands():
        if "pip install" in line:
            target = line.split("pip install", 1)[1]
            assert not re.search(r"(^|\s)['\"]?stacklens(\[|['\"]?(\s|$))", target), line


def test_application_host_install_from_a_built_wheel(tmp_path: Path) -> None:
    """The guide's wheel build and the base install: the SDK and the shipper, and no server parts."""
    env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1", **NO_COMPILE}
    env.pop("PYTHONPATH", None)
    venv = tmp_path / "opt-stacklens"
    mapping = {
        "/opt/stacklens-src": str(ROOT),
        "/opt/stacklens": str(venv),
        "/tmp/stacklens-dist": str(tmp_path / "dist"),
    }
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    wheel = next(line for line in commands() if "pip wheel" in line)
    host = next(
        line for line in commands() if "pip install" in line and "whl" in line and "[server]" not in line
    )
    for line in (wheel, host):
        result = run_sh(line, mapping, env)
        assert result.returncode == 0, f"{line}\n{result.stderr[-2000:]}"
    built = list((tmp_path / "dist").glob("stacklens-*-py3-none-any.whl"))
    assert built, "STACKLENS_PURE_PYTHON=1 must build a platform-independent wheel"
    python = venv / "bin" / "python"
    probe = subprocess.run(
        [
            str(python),
            "-c",
            "import stacklens_sdk, shipper, importlib.util as u; print(u.find_spec('fastapi') is None)",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=60,
    )
    assert probe.returncode == 0 and probe.stdout.strip() == "True", probe.stderr
    version = subprocess.run(
        [str(venv / "bin" / "stacklens-shipper"), "--version"], capture_output=True, text=True
    )
    assert version.returncode == 0 and "stacklens-shipper" in version.stdout


def test_organization_shipper_and_sdk_steps(tmp_path: Path) -> None:
    """Section 2's admin commands, section 3's shipper config and --validate, section 4's SDK snippet."""
    env = {**os.environ, "STACKLENS_DATA_DIR": str(tmp_path / "data"), "STACKLENS_SECRET_KEY": "x" * 32}
    stacklens = str(BIN / "stacklens")
    outputs: dict[str, dict[str, str]] = {}
    for line in commands():
        if not line.startswith("stacklens admin create-"):
            continue
        argv = shlex.split(line.replace("<at least 8 characters>", "correct horse battery staple 42"))
        result = subprocess.run([stacklens, *argv[1:]], capture_output=True, text=True, env=env, timeout=120)
        assert result.returncode == 0, f"{line}\n{result.stderr}"
        outputs[argv[2]] = json.loads(result.stdout)
    assert outputs["create-org"]["api_key"].startswith("stacklens_api_")
    assert outputs["create-project"]["slug"] == "checkout"
    assert outputs["create-app-key"]["app_key"].startswith("stacklens_app_worker_")

    logs = tmp_path / "var-log-checkout"
    logs.mkdir()
    config_text = blocks("yaml")[0]
    config_text = re.sub(r"stacklens_api_X+", outputs["create-org"]["api_key"], config_text)
    config_text = re.sub(r"stacklens_app_X+", outputs["create-project"]["app_key"], config_text)
    config_text = config_text.replace("/var/log/checkout/stacklens", str(logs))
    config = tmp_path / "stacklens.yaml"
    config.write_text(config_text)
    config.chmod(0o600)
    validate = subprocess.run(
        [str(BIN / "stacklens-shipper"), "--config", str(config), "--validate"],
        capture_output=True,
        text=True,
    )
    assert validate.returncode == 0 and "configuration is valid" in validate.stdout, validate.stderr

    snippet = blocks("python")[0]
    snippet = snippet.replace("stacklens_app_worker_…", outputs["create-app-key"]["app_key"])
    snippet = snippet.replace("/var/log/checkout/stacklens", str(logs))
    snippet += "\ntry:\n    1 / 0\nexcept ZeroDivisionError:\n    stacklens_sdk.capture_exception()\nstacklens_sdk.flush()\n"
    result = subprocess.run([sys.executable, "-c", snippet], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    written = [json.loads(line) for f in logs.glob("stacklens-*.log") for line in f.read_text().splitlines()]
    assert any(line["type"] == "event" for line in written)


def test_server_install_from_a_clone(tmp_path: Path) -> None:
    """Section 1 on a machine that has only the repository: clone, venv, the `server` extra, a migration."""
    env = {
        **os.environ,
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "STACKLENS_PURE_PYTHON": "1",
        **NO_COMPILE,
    }  # skip the C build
    env.pop("PYTHONPATH", None)
    mapping = {
        "<your StackLens repository URL>": str(ROOT),
        "/opt/stacklens-src": str(tmp_path / "src"),
        "/opt/stacklens": str(tmp_path / "venv"),
    }
    section = GUIDE.read_text().split("## 2.")[0]
    first = [line for line in commands() if line in section][:3]
    assert first[0].startswith("git clone") and "[server]" in first[2], first
    clone, venv, install = first
    for line in (clone, venv, install):
        if line == install:
            # The server extra's dependencies as this run's venv has them (tests/docs/lent_packages.py): the
            # guide's pip command resolves them (satisfied) and builds and installs StackLens from the clone.
            lent = lend(requirements("server"), tmp_path / "venv", tmp_path / "lent")
            assert {"fastapi", "chdb", "dagster"} <= lent, sorted(lent)
        result = run_sh(line, mapping, env)
        assert result.returncode == 0, f"{line}\n{result.stderr[-2000:]}"
    # The server runs from the package the guide installed, not from this checkout or this run's venv.
    where = subprocess.run(
        [str(tmp_path / "venv" / "bin" / "python"), "-c", "import stacklens; print(stacklens.__file__)"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=60,
    )
    assert where.stdout.startswith(str(tmp_path / "venv")), where.stdout + where.stderr
    data = tmp_path / "data"
    migrate = subprocess.run(
        [str(tmp_path / "venv" / "bin" / "stacklens"), "migrate"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env={**env, "STACKLENS_DATA_DIR": str(data)},
    )
    assert migrate.returncode == 0, migrate.stderr[-2000:]
    assert (data / "control.db").exists()
