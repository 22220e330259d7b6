from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from stacklens.cli.main import main
from stacklens.control.auth import resolve_app_key, verify_api_key
from stacklens.control.db import session_scope
from stacklens.settings import Settings
from tests.conftest import TEST_SECRET

REPO = Path(__file__).resolve().parents[3]


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


def test_admin_commands_print_the_documented_json(control_settings: Settings, capsys) -> None:
    org = run_json(
        capsys,
        "admin",
        "create-org",
        "--name",
        "Acme",
        "--owner-email",
        "o@acme.test",
        "--password",
        "password-1",
        "--json",
    )
    assert set(org) == {"org_id", "api_key"}
    project = run_json(
        capsys,
        "admin",
        "create-project",
        "--org",
        "Acme",
        "--name",
        "Web Shop",
        "--platform",
        "javascript",
        "--json",
    )
    assert set(project) == {"project_id", "slug", "app_key"} and project["slug"] == "web-shop"
    service = run_json(
        capsys, "admin", "create-app-key", "--project", "web-shop", "--service", "worker", "--json"
    )
    assert service["service"] == "worker" and service["app_key"].startswith("stacklens_app_worker_")
    api = run_json(capsys, "admin", "regenerate-api-key", "--org", "Acme", "--json")
    primary = run_json(capsys, "admin", "regenerate-app-key", "--project", "web-shop", "--json")
    worker = run_json(
        capsys, "admin", "regenerate-app-key", "--project", "web-shop", "--service", "worker", "--json"
    )
    assert set(api) == {"api_key"} and set(primary) == {"app_key"} and set(worker) == {"app_key"}
    quota = run_json(capsys, "admin", "set-quota", "--org", "Acme", "--events-per-minute", "5000", "--json")
    assert quota["events_per_minute"] == 5000
    with session_scope(control_settings) as session:
        assert verify_api_key(session, org["api_key"]) is None
        identity = verify_api_key(session, api["api_key"])
        assert identity.org_id == org["org_id"] and identity.events_per_minute == 5000
        assert resolve_app_key(session, org["org_id"], project["app_key"]) is None
        assert resolve_app_key(session, org["org_id"], primary["app_key"]).project_id == project["project_id"]
        assert resolve_app_key(session, org["org_id"], worker["app_key"]).service == "worker"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["admin", "create-project", "--org", "Nope", "--name", "X"], "no organization named 'Nope'"),
        (
            ["admin", "create-app-key", "--project", "nope", "--service", "worker"],
            "no project with slug 'nope'",
        ),
        (["admin", "regenerate-api-key", "--org", "Nope"], "no organization named 'Nope'"),
        (["admin", "set-quota", "--org", "Acme"], "needs --events-per-minute"),
        (["admin", "set-quota", "--org", "Acme", "--events-per-minute", "-3"], "events-per-minute must be"),
        (
            [
                "admin",
                "create-org",
                "--name",
                "Acme",
                "--owner-email",
                "x@y.test",
                "--password",
                "password-1",
            ],
            "already exists",
        ),
        (
            ["admin", "create-org", "--name", "B", "--owner-email", "bad", "--password", "password-1"],
            "invalid e-mail",
        ),
        (
            ["admin", "create-project", "--org", "Acme", "--name", "X", "--platform", "cobol"],
            "unknown platform",
        ),
    ],
)
def test_bad_input_is_one_line_and_nonzero(settings: Settings, capsys, argv, message) -> None:
    main(
        ["admin", "create-org", "--name", "Acme", "--owner-email", "o@acme.test", "--password", "password-1"]
    )
    capsys.readouterr()
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and message in captured.err and "Traceback" not in captured.err


def test_cli_runs_as_a_process_without_a_server(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("STACKLENS_")}
    env.update(STACKLENS_DATA_DIR=str(tmp_path / "data"), STACKLENS_SECRET_KEY=TEST_SECRET)
    command = [
        sys.executable,
        "-m",
        "stacklens.cli.main",
        "admin",
        "create-org",
        "--name",
        "Proc",
        "--owner-email",
        "p@proc.test",
        "--password",
        "password-1",
        "--json",
    ]
    first = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=60)
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["api_key"].startswith("stacklens_api_")
    again = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=60)
    assert again.returncode == 2
    assert again.stderr.strip() == "stacklens: an organization named 'Proc' already exists"
    assert not (tmp_path / "data" / "warehouse").exists()  # control-store commands never open the warehouse
