"""Processes of the end-to-end tests: the project's own commands started as a user starts them.

Every process writes its output to a log file under the test's directory; :meth:`Stack.report` prints the
tails of all of them when a test fails, so a failure in CI shows what the server and the shipper said.
"""

from __future__ import annotations

import contextlib
import html
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, TypeVar

import httpx
import yaml

BIN = Path(sys.executable).parent
REPO = Path(__file__).resolve().parents[2]
T = TypeVar("T")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def clean_env(data_dir: Path, **extra: str) -> dict[str, str]:
    """The environment of a fresh installation: no STACKLENS_* setting leaks in from the caller's shell."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("STACKLENS_")}
    env.update(STACKLENS_DATA_DIR=str(data_dir), PYTHONUNBUFFERED="1", **extra)
    return env


def wait_for(what: str, check: Callable[[], T | None], timeout: float, interval: float = 0.2) -> T:
    """Poll ``check`` until it returns something truthy; fail with ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(interval)


def tail(path: Path, lines: int = 40) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except FileNotFoundError:
        return "(no output)"


@dataclass
class Proc:
    name: str
    popen: subprocess.Popen[bytes]
    log_path: Path

    def output(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def running(self) -> bool:
        return self.popen.poll() is None

    def wait(self, timeout: float) -> int:
        try:
            return self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"{self.name} did not exit within {timeout:.0f} s") from None

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 30.0) -> int:
        """Send ``sig`` and wait; SIGKILL as a last resort so no test leaves a process behind."""
        if self.running():
            self.popen.send_signal(sig)
        try:
            return self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            self.popen.kill()
            self.popen.wait(10)
            raise AssertionError(f"{self.name} ignored signal {sig} for {timeout:.0f} s") from None


@dataclass
class Stack:
    """The processes of one test, each logging to ``<root>/<name>.log``."""

    root: Path
    env: dict[str, str]
    procs: list[Proc] = field(default_factory=list)

    def start(self, name: str, argv: list[str], cwd: Path | None = None, **env: str) -> Proc:
        log_path = self.root / f"{name}.log"
        suffix = 1
        while log_path.exists():  # a restarted process keeps its first log
            suffix += 1
            log_path = self.root / f"{name}-{suffix}.log"
        with open(log_path, "wb") as out:
            popen = subprocess.Popen(
                argv, stdout=out, stderr=subprocess.STDOUT, env={**self.env, **env}, cwd=cwd or self.root
            )
        proc = Proc(name, popen, log_path)
        self.procs.append(proc)
        return proc

    def run(self, argv: list[str], timeout: float = 60.0) -> subprocess.CompletedProcess[str]:
        """Run a command to completion; its output is kept for the failure report."""
        result = subprocess.run(
            argv, capture_output=True, text=True, env=self.env, cwd=self.root, timeout=timeout
        )
        with open(self.root / "commands.log", "a") as log:
            log.write(f"$ {' '.join(argv)}\n[exit {result.returncode}]\n{result.stdout}{result.stderr}\n")
        return result

    def run_json(self, argv: list[str]) -> dict[str, Any]:
        result = self.run(argv)
        assert result.returncode == 0, f"{argv[1:3]} failed: {result.stderr}"
        return json.loads(result.stdout)

    def report(self) -> None:
        # Process logs only: the SDK's own stacklens-YYYY-MM-DD.log files are data, not diagnostics.
        for path in sorted(p for p in self.root.rglob("*.log") if not p.name.startswith("stacklens-")):
            print(f"\n===== last lines of {path} =====\n{tail(path)}")

    @contextlib.contextmanager
    def reporting(self) -> Iterator[None]:
        """Print every process's log tail when the block fails."""
        try:
            yield
        except BaseException:
            self.report()
            raise

    def close(self) -> None:
        for proc in reversed(self.procs):
            if proc.running():
                proc.popen.kill()
                proc.popen.wait(10)


@dataclass(frozen=True)
class Service:
    """A running `stacklens serve` with one organization and project made by the admin CLI."""

    org: dict[str, Any]
    project: dict[str, Any]
    port: int
    base: str
    server: Proc


def start_service(stack: Stack, org_name: str, owner: tuple[str, str], project_name: str) -> Service:
    """Create the organization and project with `stacklens admin`, then serve on a free port until healthy."""
    stacklens = str(BIN / "stacklens")
    org = stack.run_json([stacklens, "admin", "create-org", "--json", "--name", org_name,
                          "--owner-email", owner[0], "--password", owner[1]])  # fmt: skip
    project = stack.run_json([stacklens, "admin", "create-project", "--json", "--org", org_name,
                              "--name", project_name])  # fmt: skip
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = stack.start("server", [stacklens, "serve", "--port", str(port)])
    wait_healthy(base, server)
    return Service(org, project, port, base, server)


def wait_healthy(base_url: str, proc: Proc, timeout: float = 120.0) -> None:
    def healthy() -> bool:
        if not proc.running():
            raise AssertionError(f"{proc.name} exited with {proc.popen.returncode}:\n{tail(proc.log_path)}")
        try:
            return httpx.get(f"{base_url}/api/health", timeout=2.0).status_code == 200
        except httpx.HTTPError:
            return False

    wait_for(f"{base_url}/api/health", healthy, timeout, interval=0.3)


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []

    def handle_data(self, data: str) -> None:
        self.parts.append(data)


def page_text(markup: str) -> str:
    """The visible text of a page with whitespace collapsed (for assertions independent of markup)."""
    parser = _Text()
    parser.feed(markup)
    return re.sub(r"\s+", " ", html.unescape(" ".join(parser.parts)))


def sign_in(base_url: str, email: str, password: str) -> httpx.Client:
    """A browser-like client signed in through /login with the form's CSRF token."""
    client = httpx.Client(base_url=base_url, timeout=30.0, follow_redirects=False)
    form = client.get("/login")
    assert form.status_code == 200, form.status_code
    token = re.search(r'name="csrf_token" value="([^"]+)"', form.text)
    assert token, "the sign-in form carries no CSRF token"
    answer = client.post(
        "/login",
        data={"email": email, "password": password, "csrf_token": token.group(1), "next": "/"},
    )
    assert answer.status_code == 303, (
        f"sign-in refused ({answer.status_code}): {page_text(answer.text)[:300]}"
    )
    return client


def write_shipper_config(path: Path, api_key: str, app_key: str, port: int, storage: Path) -> None:
    """`stacklens.yaml`, 0600, with small batches and a short flush so delivery takes several batches."""
    document = {
        "stacklens": {
            "apiKey": api_key,
            "appKey": app_key,
            "baseUrl": f"http://127.0.0.1:{port}",
            "storagePath": str(storage),
            "allowInsecureHttp": True,  # the test server speaks plain http on loopback
            "batchSize": 3,
            "flushInterval": "300ms",
            "commitInterval": "200ms",
            "retryBackoff": "200ms",
        }
    }
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        yaml.safe_dump(document, handle)


def shipper_status(stack: Stack, config: Path) -> dict[str, Any]:
    result = stack.run([str(BIN / "stacklens-shipper"), "--config", str(config), "--status", "--json"])
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def all_issues(api: httpx.Client, slug: str) -> list[dict[str, Any]]:
    issues: list[dict[str, Any]] = []
    cursor = ""
    while True:
        page = api.get(
            f"/api/projects/{slug}/issues", params={"status": "all", "limit": 100, "cursor": cursor}
        )
        assert page.status_code == 200, page.text
        body = page.json()
        issues.extend(body["issues"])
        if not body["next_cursor"]:
            return issues
        cursor = body["next_cursor"]


def unhandled_errors(log: str) -> list[str]:
    """The exception line and innermost project frame of every traceback in a log."""
    found, lines = [], log.splitlines()
    for start, line in enumerate(lines):
        if not line.startswith("Traceback"):
            continue
        frames, end = [], "?"
        for entry in lines[start + 1 :]:
            if entry and not entry[0].isspace():
                end = entry
                break
            if entry.strip().startswith('File "') and "site-packages" not in entry:
                frames.append(entry.strip())
        found.append(f"{end} at {frames[-1] if frames else '?'}")
    return found
