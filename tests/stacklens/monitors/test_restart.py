"""A real `stacklens serve` killed with SIGKILL across a cron monitor's deadline and started again reports
that missed run exactly once: one missed check-in and one signed webhook notice, however many detection
passes the restarted server makes (it catches up every few seconds after a start: every 2 s here, through
`stacklens serve`'s hidden STACKLENS_PIPELINES_CATCH_UP_INTERVAL, instead of the default 10 s the test would
wait for).

The server runs under a clock moved to a few seconds before a minute (tests/clock_shift.py), both times with
the same shift: the every-minute monitor's deadline comes seconds after its creation, not up to a minute."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from stacklens.server_link import TOKEN_HEADER
from tests.clock_shift import SHIFT_ENV, shift_to_second, shifted_now

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[3]
RECEIVED: list[dict[str, Any]] = []


class _Receiver(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        RECEIVED.append({"id": self.headers.get("webhook-id"), "body": json.loads(body or b"{}")})
        self.send_response(200)
        self.end_headers()

    def log_message(self, *_args: Any) -> None:
        pass


@pytest.fixture
def receiver() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Receiver)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/hook"
    server.shutdown()
    server.server_close()


def _port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _cli(env: dict[str, str], *args: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "stacklens.cli.main", *args, "--json"],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    parsed: dict[str, Any] = json.loads(done.stdout)
    return parsed


def _serve(env: dict[str, str], url: str, log: Path) -> subprocess.Popen[bytes]:
    with log.open("ab") as out:  # the child keeps its own descriptor of the file
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tests.clock_shift",
                "stacklens.cli.main",
                "serve",
                "--port",
                env["STACKLENS_PORT"],
            ],
            env=env,
            cwd=ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        assert proc.poll() is None, log.read_text()
        try:
            if httpx.get(url + "/api/health", timeout=2).status_code == 200:
                return proc
        except httpx.TransportError:
            time.sleep(0.3)
    proc.kill()
    pytest.fail("server did not start: " + log.read_text())


def _detections_since(data_dir: Path, url: str, since: datetime) -> int:
    """Runs holding the monitors job that started after ``since`` and ended well (the server's pipelines
    status, asked with the token the server wrote for the `stacklens pipelines` commands)."""
    token = json.loads((data_dir / "pipelines_token").read_text())["token"]
    status = httpx.get(url + "/api/pipelines/status", headers={TOKEN_HEADER: token}, timeout=30)
    assert status.status_code == 200, status.text
    return sum(
        1
        for run in status.json()["runs"]
        if run["status"] == "SUCCESS"
        and "monitors_job" in run["jobs"]
        and run["started_at"]
        and datetime.fromisoformat(run["started_at"].replace("Z", "+00:00")) > since
    )


def test_a_deadline_passed_while_killed_is_reported_once_after_the_restart(
    tmp_path: Path, receiver: str
) -> None:
    RECEIVED.clear()
    data_dir = tmp_path / "data"
    port = _port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("STACKLENS_")}
    env.update(
        STACKLENS_DATA_DIR=str(data_dir),
        STACKLENS_RUN_SCHEDULES="true",
        STACKLENS_PIPELINES_CATCH_UP_INTERVAL="2",
        STACKLENS_PORT=str(port),
        STACKLENS_OUTBOUND_ALLOW="127.0.0.1",
        PYTHONPATH=str(ROOT),
    )
    url = f"http://127.0.0.1:{port}"
    org = _cli(
        env,
        "admin",
        "create-org",
        "--name",
        "Acme",
        "--owner-email",
        "o@acme.test",
        "--password",
        "long-password-1",
    )
    project = _cli(env, "admin", "create-project", "--org", "Acme", "--name", "Jobs")
    auth = {"Authorization": f"Bearer {org['api_key']}"}
    log = tmp_path / "serve.log"
    # The server's clock reads second 35 as it starts: started in a few seconds (8 on a slow host), it makes
    # the monitor with its first deadline seconds away.
    shift = shift_to_second(35)
    env[SHIFT_ENV] = str(shift)
    proc = _serve(env, url, log)
    try:
        channel = httpx.post(
            url + "/api/alerts/channels",
            json={"type": "webhook", "name": "ops", "url": receiver},
            headers=auth,
        )
        assert channel.status_code == 201, channel.text
        rule = {
            "name": "jobs",
            "type": "monitor",
            "project": project["slug"],
            "channels": [channel.json()["id"]],
        }
        assert httpx.post(url + "/api/alerts/rules", json=rule, headers=auth).status_code == 201
        monitor = {"slug": "every-minute", "schedule": "* * * * *", "checkin_margin": 0}
        # At least 10 s before the next minute as the monitor is made: its first deadline must come after the
        # kill that follows it. Checked here, after the channel and the rule, not before them: on a loaded
        # 2.5x slower host those two requests and the server's first pipeline pass took over 12 s.
        if 60 - shifted_now(shift).second < 10:
            time.sleep(61 - shifted_now(shift).second)
        created = httpx.post(f"{url}/api/projects/{project['slug']}/monitors", json=monitor, headers=auth)
        assert created.status_code == 201, created.text
        deadline = datetime.fromisoformat(created.json()["next_expected_at"].replace("Z", "+00:00"))
        proc.kill()  # SIGKILL: nothing of the process runs after this
        proc.wait(30)
        assert deadline > shifted_now(shift), "the deadline passed before the kill"
        time.sleep(max(0.0, (deadline - shifted_now(shift)).total_seconds()) + 1)
        # Down across the deadline; started again, then given its detection passes and the notice's delivery.
        restarted = shifted_now(shift)
        proc = _serve(env, url, log)
        # Waited for, not slept for: three finished detection runs of the restarted server (its first pass, a
        # catch-up then the minute's schedules, and the catch-up 2 s later) as its pipelines status lists
        # them; a fixed 12 s after the first notice need not cover the third on a loaded machine.
        waited = time.monotonic() + 90
        while (not RECEIVED or _detections_since(data_dir, url, restarted) < 3) and time.monotonic() < waited:
            time.sleep(0.5)
        assert _detections_since(data_dir, url, restarted) >= 3, log.read_text()[-3000:]
        checkins = httpx.get(
            f"{url}/api/projects/{project['slug']}/monitors/every-minute/checkins", headers=auth
        ).json()["rows"]
    finally:
        proc.kill()
        proc.wait(30)
    missed = [c for c in checkins if c["expected_at"] == created.json()["next_expected_at"]]
    assert [c["status"] for c in missed] == ["missed"], checkins
    firing = [r for r in RECEIVED if r["body"].get("data", {}).get("state") == "firing"]
    assert len(firing) == 1, (RECEIVED, log.read_text()[-3000:])
    assert firing[0]["body"]["data"]["monitor"] == "every-minute"
    assert len({r["id"] for r in RECEIVED}) == len(RECEIVED)
