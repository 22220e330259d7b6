"""A real `stacklens serve` subprocess (own data dir): it runs the schedules in-process, catches up right
after start, and serves `stacklens pipelines run|status` through its token-protected local endpoint; once
it stops, the same commands run directly."""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from demo import browser, browser_pageloads
from stacklens.server_link import call_server, read_link
from stacklens.settings import Settings
from tests.stacklens.ingest.sdk_events import capture

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[3]


def fail_payment(order: int) -> None:
    raise ValueError(f"payment {order} declined")


def fail_lookup(key: int) -> None:
    raise KeyError(f"sku-{key}")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@dataclass
class Server:
    proc: subprocess.Popen[str]
    url: str
    env: dict[str, str]
    data_dir: Path
    api_key: str
    app_key: str

    def cli(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "stacklens.cli.main", *args],
            env=self.env,
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=timeout,
        )


def cli_json(server: Server, *args: str) -> dict[str, Any]:
    done = server.cli(*args)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)


def ingest(server: Server, payloads: list[tuple[str, dict[str, Any]]]) -> None:
    now = datetime.now(UTC).isoformat().replace("+00:00", "Z")
    lines = [
        json.dumps({"v": 1, "type": kind, "ts": now, "app_key": server.app_key, "payload": payload})
        for kind, payload in payloads
    ]
    response = httpx.post(
        server.url + "/api/ingest",
        content="\n".join(lines).encode(),
        headers={"Authorization": f"Bearer {server.api_key}", "Content-Type": "application/x-ndjson"},
        timeout=30,
    )
    assert response.status_code == 200, response.text


def page_loads(count: int, seed: int) -> list[tuple[str, dict[str, Any]]]:
    rng = random.Random(seed)
    release = browser.ReleaseShape("shop@2.0.0", 400_000, True, 1.0)
    now = datetime.now(UTC)
    return [
        (
            "transaction",
            browser_pageloads.pageload(rng, "https://shop.test", release, "production", now, None, False),
        )
        for _ in range(count)
    ]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    data_dir = tmp_path_factory.mktemp("serve") / "data"
    env = {k: v for k, v in os.environ.items() if not k.startswith("STACKLENS_")}
    env.update(
        {"STACKLENS_DATA_DIR": str(data_dir), "STACKLENS_RUN_SCHEDULES": "true", "PYTHONPATH": str(ROOT)}
    )
    port = free_port()
    # The commands' configured port is the server's: they check that no server of another data directory
    # serves it (stacklens/installation.py), and port 8000 may be anybody's on a shared machine.
    env["STACKLENS_PORT"] = str(port)
    probe = Server(None, f"http://127.0.0.1:{port}", env, data_dir, "", "")
    org = cli_json(
        probe,
        "admin",
        "create-org",
        "--name",
        "Acme",
        "--owner-email",
        "o@acme.test",
        "--password",
        "long-password-1",
        "--json",
    )
    project = cli_json(probe, "admin", "create-project", "--org", "Acme", "--name", "Shop", "--json")
    log = (data_dir / "serve.log").open("w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "stacklens.cli.main", "serve", "--port", str(port)],
        env=env,
        cwd=ROOT,
        stdout=log,
        stderr=subprocess.STDOUT,
        text=True,
    )
    srv = Server(proc, probe.url, env, data_dir, org["api_key"], project["app_key"])
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        assert proc.poll() is None, (data_dir / "serve.log").read_text()
        try:
            if httpx.get(srv.url + "/api/health", timeout=2).status_code < 500:
                break
        except httpx.TransportError:
            time.sleep(0.5)
    else:
        pytest.fail("server did not start: " + (data_dir / "serve.log").read_text())
    try:
        yield srv
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)
        log.close()


def test_schedules_catch_up_and_status_goes_through_the_server(server: Server) -> None:
    ingest(
        server, page_loads(12, seed=1) + [("event", capture(lambda n=n: fail_payment(n))) for n in range(3)]
    )
    deadline = time.monotonic() + 90
    link = read_link(Settings(data_dir=server.data_dir))
    assert link is not None
    while time.monotonic() < deadline:
        # Waited for through the server's endpoint the command calls (a command's interpreter start is a
        # second of CPU a poll); the status is then read with the command itself.
        waited = call_server(link, "GET", "/api/pipelines/status")
        # The marts fill step by step while the run goes on (later assets follow them): wait for its end too.
        if (
            waited["marts"]["pageload_periods"]
            and waited["marts"]["issues"]
            and waited["marts"]["resource_request_periods"]
            and {"issues_job", "performance_job"} <= _succeeded_jobs(waited)
        ):
            break
        time.sleep(1)
    status = cli_json(server, "pipelines", "status", "--json")
    jobs = _succeeded_jobs(status)
    assert status["marts"]["pageload_periods"] >= 1 and status["marts"]["issues"] == 1, status
    assert status["marts"]["endpoint_call_periods"] >= 1
    # A tick's due jobs run as one merged run: `jobs` lists the scheduled jobs each run stood for.
    assert {"issues_job", "performance_job"} <= jobs
    assert all(run["schedule"] for run in status["runs"])
    assert (server.data_dir / "dagster" / "dagster.yaml").exists()


def _succeeded_jobs(status: dict[str, Any]) -> set[str]:
    return {job for run in status["runs"] if run["status"] == "SUCCESS" for job in run["jobs"]}


def test_run_goes_through_the_server_and_refuses_api_keys(server: Server) -> None:
    token_file = server.data_dir / "pipelines_token"
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    link = json.loads(token_file.read_text())
    assert link["url"] == server.url
    denied = httpx.post(
        server.url + "/api/pipelines/run",
        json={},
        headers={"Authorization": f"Bearer {server.api_key}"},
        timeout=10,
    )
    assert denied.status_code == 401
    wrong = httpx.post(
        server.url + "/api/pipelines/run",
        json={},
        headers={"X-StackLens-Pipelines-Token": link["token"][:-1] + "x"},
        timeout=10,
    )
    assert wrong.status_code == 401
    # The budgets job has no new-data plan: a selected run always executes, in the server process.
    answer = cli_json(server, "pipelines", "run", "--select", "budget_status", "--json")
    assert answer["via"] == "server"
    assert [o["job"] for o in answer["outcomes"]] == ["budgets_job"] and answer["outcomes"][0]["success"]
    assert answer["outcomes"][0]["assets"]["budget_status"] == 0  # no budgets yet
    assert answer["outcomes"][0]["checks"]["budget_status:budgets_evaluated"] is True
    # A new error site: whichever runs first (this command or the start-up catch-up), it becomes issue two.
    ingest(server, [("event", capture(lambda: fail_lookup(7)))])
    answer = cli_json(server, "pipelines", "run", "--select", "issues", "--json")
    assert all(o["success"] and o["job"] == "issues_job" for o in answer["outcomes"]), answer
    assert cli_json(server, "pipelines", "status", "--json")["marts"]["issues"] == 2
    bad = server.cli("pipelines", "run", "--select", "nope")
    assert bad.returncode == 2 and "unknown asset nope" in bad.stderr


def test_backfill_goes_through_the_server(server: Server) -> None:
    """`stacklens pipelines backfill` while serve owns the embedded warehouse: the runs execute in the server
    (issue #47: the read-only UI cannot launch them, the command can)."""
    today = datetime.now(UTC).date()
    first = (today - timedelta(days=3)).isoformat()
    answer = cli_json(server, "pipelines", "backfill", "--from", first, "--to", today.isoformat(), "--json")
    assert answer["via"] == "server"
    assert {o["job"] for o in answer["outcomes"]} == {"performance_job", "sessions_job"}
    assert all(o["success"] for o in answer["outcomes"]), answer
    bad = server.cli("pipelines", "backfill", "--from", today.isoformat(), "--to", first)
    assert bad.returncode == 2 and "--to:" in bad.stderr and "is before --from" in bad.stderr


def test_shutdown_stops_the_runner_then_commands_run_directly(server: Server) -> None:
    server.proc.send_signal(signal.SIGTERM)
    assert server.proc.wait(60) == 0
    log = (server.data_dir / "serve.log").read_text()
    assert "schedules run in this process" in log and "Traceback" not in log
    assert not (server.data_dir / "pipelines_token").exists()
    answer = cli_json(server, "pipelines", "run", "--json")
    assert answer["via"] == "direct"
    assert all(o["success"] for o in answer["outcomes"])
    status = cli_json(server, "pipelines", "status", "--json")
    assert status["marts"]["issues"] == 2 and not status["failures"]
