"""A command run from the wrong directory (issue #47, point 6): against a real server (uvicorn, the real
app) of one data directory, `stacklens demo-org` with another refuses and names the server's; with no
server it says that it creates a new installation, and where; the server names its data directory to local
callers only."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import uvicorn

from api.app import create_app
from stacklens.cli.main import main
from stacklens.installation import OtherInstallation, check_installation
from stacklens.settings import Settings, override_settings


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def served(settings: Settings) -> Iterator[tuple[Settings, int]]:
    port = _free_port()
    instance = uvicorn.Server(
        uvicorn.Config(create_app(settings), host="127.0.0.1", port=port, log_level="warning")
    )
    thread = threading.Thread(target=instance.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not instance.started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert instance.started
    yield settings, port
    instance.should_exit = True
    thread.join(timeout=10)


def _elsewhere(tmp_path: Path, warehouse_url: str, port: int) -> Settings:
    """An embedded install's settings as a command run from ``tmp_path/elsewhere`` sees them: the data
    directory, secret and control store from the default ``./data``."""
    return Settings(
        data_dir=tmp_path / "elsewhere" / "data",
        warehouse_url=warehouse_url,
        port=port,
        run_schedules=False,
    )


def test_a_command_of_another_data_directory_is_refused_and_pointed_at_the_server(
    served: tuple[Settings, int], tmp_path: Path, warehouse_url: str, capsys
) -> None:
    server_settings, port = served
    wrong = _elsewhere(tmp_path, warehouse_url, port)
    override_settings(wrong)
    assert main(["demo-org", "--json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert f"serves the data directory {server_settings.data_dir}" in captured.err
    assert f"STACKLENS_DATA_DIR={server_settings.data_dir}" in captured.err
    assert "does not exist yet" in captured.err
    assert not wrong.data_dir.exists()  # nothing created

    # The server's own data directory passes (no notice: it is an installation already).
    server_settings.data_dir.joinpath("control.db").touch(exist_ok=True)
    same = wrong.model_copy(update={"data_dir": server_settings.data_dir})
    assert check_installation(same, "demo-org") is None


def test_the_server_names_its_data_directory_to_local_direct_callers_only(
    served: tuple[Settings, int],
) -> None:
    server_settings, port = served
    health = httpx.get(f"http://127.0.0.1:{port}/api/health").json()
    assert set(health) == {"status"}  # health tells no path, to anyone
    direct = httpx.get(f"http://127.0.0.1:{port}/api/health/installation").json()
    assert direct == {"status": "ok", "data_dir": str(server_settings.data_dir)}
    proxied = httpx.get(
        f"http://127.0.0.1:{port}/api/health/installation", headers={"X-Forwarded-For": "203.0.113.9"}
    )
    assert proxied.status_code == 404
    assert str(server_settings.data_dir) not in proxied.text


def test_a_command_that_creates_an_installation_says_so_and_where(
    tmp_path: Path, warehouse_url: str, capsys
) -> None:
    new = _elsewhere(tmp_path, warehouse_url, _free_port())  # nothing serves on this port
    override_settings(new)
    try:
        assert main(["demo-org", "--json"]) == 0
        first = capsys.readouterr()
        assert f"creating a new installation in {new.data_dir}" in first.err
        assert json.loads(first.out)["email"]
        assert (new.data_dir / "control.db").exists()

        assert main(["demo-org", "--json"]) == 0  # the second run works on it without a word
        assert "creating" not in capsys.readouterr().err
    finally:
        override_settings(None)
        from stacklens.control.db import dispose_engines

        dispose_engines()


def test_serve_looks_at_the_port_it_is_told_to_listen_on(
    served: tuple[Settings, int], tmp_path: Path, warehouse_url: str, capsys
) -> None:
    """A second installation on another port is no mistake: `serve --port` of a new data directory is not
    refused because a server of another one serves the configured port (it only says that it creates one)."""
    from stacklens.cli.main import _check_installation, build_parser

    _, port = served
    override_settings(_elsewhere(tmp_path, warehouse_url, port))  # the configured port is the other server's
    args = build_parser().parse_args(["serve", "--port", str(_free_port())])
    _check_installation(args)
    assert "creating a new installation" in capsys.readouterr().err
    same_port = build_parser().parse_args(["serve", "--port", str(port)])
    with pytest.raises(OtherInstallation, match="serves the data directory"):
        _check_installation(same_port)
