"""Rotating an application key on a running installation (docs/getting-started.md, "Rotating keys").

After `stacklens admin regenerate-app-key`, lines the application wrote with the old key before it was
redeployed are refused by the service; everything written with the new key must still be delivered, and the
shipper must not stop on the refused lines.
"""

from __future__ import annotations

import signal
import sys
from pathlib import Path

import httpx
import pytest

from tests.e2e.e2e_stack import (
    BIN,
    Stack,
    all_issues,
    clean_env,
    shipper_status,
    start_service,
    wait_for,
    write_shipper_config,
)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

WRITE = (
    "import sys, stacklens_sdk\n"
    "stacklens_sdk.init(app_key=sys.argv[1], storage_path=sys.argv[2])\n"
    "for n in range(int(sys.argv[3])):\n"
    "    stacklens_sdk.capture_message(f'{sys.argv[4]} {n}')\n"
    "stacklens_sdk.close()\n"
)


def write_messages(stack: Stack, app_key: str, storage: Path, count: int, text: str) -> None:
    result = stack.run([sys.executable, "-c", WRITE, app_key, str(storage), str(count), text])
    assert result.returncode == 0, result.stderr


def test_lines_written_after_an_app_key_rotation_are_delivered(tmp_path: Path) -> None:
    data, storage = tmp_path / "data", tmp_path / "logs"
    stack = Stack(tmp_path, clean_env(data))
    try:
        with stack.reporting():
            stacklens = str(BIN / "stacklens")
            service = start_service(stack, "Rotation", ("owner@rotation.example", "rotate-me-123"), "Billing")
            org = service.org
            project = service.project
            port = service.port
            base = service.base

            old_key = project["app_key"]
            write_messages(stack, old_key, storage, 3, "written with the old key")
            new_key = stack.run_json([stacklens, "admin", "regenerate-app-key", "--project", project["slug"],
                                      "--json"])["app_key"]  # fmt: skip
            write_messages(stack, new_key, storage, 2, "written with the new key")

            config = tmp_path / "stacklens.yaml"
            write_shipper_config(config, org["api_key"], new_key, port, storage)
            shipper = stack.start(
                "shipper", [str(BIN / "stacklens-shipper"), "--config", str(config), "--record"]
            )
            wait_for(
                "the shipper to get past the old key's lines",
                lambda: shipper_status(stack, config)["pending"]["lines"] == 0,
                30,
                0.5,
            )
            api = httpx.Client(
                base_url=base, timeout=30.0, headers={"Authorization": f"Bearer {org['api_key']}"}
            )
            with api:
                issues = wait_for("the new key's events", lambda: all_issues(api, project["slug"]), 30, 0.5)
            assert [i["events"] for i in issues] == [2]
            assert issues[0]["title"].startswith("written with the new key")
            assert shipper.stop(signal.SIGTERM) == 0
    finally:
        stack.close()
