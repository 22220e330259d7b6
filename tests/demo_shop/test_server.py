"""The demo shop's process (`python -m demo_shop.server`, as `stacklens up` starts it): its app key comes
from the environment and never stands on its command line, where `ps` shows it to every user (issue #47);
without one it stops with the variable named."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

from demo_shop.server import APP_KEY_ENV

ROOT = Path(__file__).resolve().parents[2]
KEY = "stacklens_app_" + "k" * 24


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_the_app_key_is_read_from_the_environment_not_the_command_line(tmp_path: Path) -> None:
    port = _free_port()
    storage = tmp_path / "logs"
    env = {**os.environ, APP_KEY_ENV: KEY}
    process = subprocess.Popen(
        [sys.executable, "-m", "demo_shop.server", "--storage-path", str(storage), "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/api/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert process.poll() is None and time.monotonic() < deadline, "the shop did not start"
            time.sleep(0.2)
        command_line = Path(f"/proc/{process.pid}/cmdline").read_bytes().decode()
        assert KEY not in command_line and "--app-key" not in command_line
        assert httpx.get(f"http://127.0.0.1:{port}/api/search", params={"q": "filter kit"}).status_code == 500
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(30)
    lines = [
        json.loads(line) for path in storage.glob("stacklens-*.log") for line in path.read_text().splitlines()
    ]
    assert lines and {line["app_key"] for line in lines} == {KEY}  # the SDK writes with the key it was given


def test_without_a_key_the_shop_names_the_variable(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != APP_KEY_ENV}
    done = subprocess.run(
        [sys.executable, "-m", "demo_shop.server", "--storage-path", str(tmp_path)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and f"set {APP_KEY_ENV}" in done.stderr
