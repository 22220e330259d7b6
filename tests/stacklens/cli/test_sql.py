"""`stacklens sql` through a real running server with the operator token the server wrote to the data dir:
a read-only statement prints its rows, a write is refused with the plain message, no server is a plain
line."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest
import uvicorn

from api.app import create_app
from stacklens.cli.main import main
from stacklens.control.db import migrate_control_store
from stacklens.server_link import remove_link, write_link
from stacklens.settings import Settings
from stacklens.warehouse.migrations import apply_migrations


@pytest.fixture
def running(settings: Settings) -> Iterator[str]:
    migrate_control_store(settings)
    apply_migrations(settings)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    app = create_app(settings)
    url = f"http://127.0.0.1:{port}"
    token = write_link(settings, url)
    app.state.pipelines_token = token
    instance = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=instance.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not instance.started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert instance.started
    yield url
    instance.should_exit = True
    thread.join(timeout=10)
    remove_link(settings, token)


def test_sql_through_the_running_server(running, settings, capsys) -> None:
    assert main(["sql", "SELECT count() AS n FROM transactions"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].strip() == "n" and out[1].strip() == "0"
    assert main(["sql", "INSERT INTO transactions (org_id) VALUES (1)"]) == 2
    assert "only read-only statements" in capsys.readouterr().err


def test_sql_without_a_server_says_so(settings, capsys) -> None:
    assert main(["sql", "SELECT 1"]) == 2
    assert "no running server" in capsys.readouterr().err
