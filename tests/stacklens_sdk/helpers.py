"""Helpers of the SDK tests, imported by their tests and ``conftest.py`` as
``tests.stacklens_sdk.helpers``."""

from __future__ import annotations

import json
import os
import secrets
import socket
import string
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
BROWSER_DIR = Path(__file__).resolve().parent / "browser"
_BASE62 = string.ascii_letters + string.digits


def make_app_key(service: str | None = None) -> str:
    secret = "".join(secrets.choice(_BASE62) for _ in range(24))
    return f"stacklens_app_{service}_{secret}" if service else f"stacklens_app_{secret}"


def read_lines(storage: Path, settle: float = 5.0) -> list[dict[str, Any]]:
    """Every log line of every daily file in ``storage``, parsed. A file that does not end with a newline
    is read again for up to ``settle`` seconds (a writer in another process may be mid-line); a line still
    torn then fails the test."""
    lines: list[dict[str, Any]] = []
    for path in sorted(storage.glob("stacklens-*.log")):
        deadline = time.monotonic() + settle
        raw = path.read_bytes()
        while raw and not raw.endswith(b"\n") and time.monotonic() < deadline:
            time.sleep(0.05)
            raw = path.read_bytes()
        assert raw == b"" or raw.endswith(b"\n"), f"{path.name} does not end with a newline"
        lines.extend(json.loads(line) for line in raw.decode("utf-8").splitlines())
    return lines


def lines_so_far(storage: Path) -> list[dict[str, Any]]:
    """The complete log lines written so far, for polling while a writer in another process is still
    appending: a line being written is not yet terminated, and is left for the next poll
    (:func:`read_lines`, once the writer is done, fails on a torn line)."""
    lines: list[dict[str, Any]] = []
    for path in sorted(storage.glob("stacklens-*.log")):
        complete = path.read_bytes().rpartition(b"\n")[0]
        lines.extend(json.loads(line) for line in complete.decode("utf-8").splitlines())
    return lines


def wait_for(predicate: Callable[[], Any], timeout: float = 15.0, interval: float = 0.1) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            return value
        time.sleep(interval)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Server:
    """A uvicorn subprocess on a free 127.0.0.1 port."""

    def __init__(self, app_dir: Path, app: str, env: dict[str, str], log: Path) -> None:
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self._log = log.open("wb")
        cmd = [sys.executable, "-m", "uvicorn", "--app-dir", str(app_dir), app]
        cmd += ["--host", "127.0.0.1", "--port", str(self.port), "--log-level", "warning"]
        self.proc = subprocess.Popen(
            cmd, cwd=REPO, env={**os.environ, **env}, stdout=self._log, stderr=subprocess.STDOUT
        )
        self.log_path = log
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited: {log.read_text()}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"server did not start: {log.read_text()}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()
