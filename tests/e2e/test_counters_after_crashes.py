"""The server killed with SIGKILL three times while the shipper delivers, with batches of 1, 50 and 1,000
lines, and while eight Sentry clients send one-event gzip envelopes (the peer benchmark's clients,
bench/peers.py).

Three `stacklens-shipper --record` processes (one per batch size, each its own project) deliver to one
`stacklens serve`, which is killed three times mid-delivery (each kill right after the 1,000-line shipper's
next batch was accepted, so it is sending another and the others are mid-stream) and started again; after the
third start the server runs its pipeline schedules too, so the runs of the catch-up meet batches still
landing. Once the shippers have drained and `stacklens pipelines run` finds nothing left to do, every event
is stored once, the issue list counts every event, and — read from the warehouse the stopped server left —
every insert-time counter (issue counters, users, daily counts, facets, tags, release error counts, the issue
rollup), the marts built on them and the alert measures equal a direct query of the stored events.

The envelope clients resend an event whose request got no answer (the server was killed under it) until it is
answered: every event is then stored exactly once, whether its first attempt landed in the front door's spool
before the kill (the next start drains it, and the resend is a duplicate) or never got there.

Lines: 5,000 for the 50- and 1,000-line batches; 100 for single-line batches (a single-line request costs
~0.1–0.3 s on a shared 2-core host beside the others, so 5,000 would take minutes, and a single-line batch
lands like any other: one request, one attempt)."""

from __future__ import annotations

import gzip
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from tests.e2e.e2e_stack import (
    BIN,
    REPO,
    Proc,
    Stack,
    all_issues,
    clean_env,
    free_port,
    shipper_status,
    unhandled_errors,
    wait_for,
    wait_healthy,
)
from tests.stacklens.issues.crashed_landing import event_lines

pytestmark = [pytest.mark.slow, pytest.mark.timeout(420)]

LINES = {1: 100, 50: 5000, 1000: 5000}  # batch size -> lines delivered
KILLS = 3
ENVELOPES = 600  # one-event envelopes sent by the Sentry clients
ENVELOPE_CLIENTS = 8


class EnvelopeClients:
    """Eight threads sending one-event gzip envelopes until each event is answered 200; a request that fails
    without an answer (the server killed, or starting) is sent again after a pause."""

    def __init__(self, port: int, project: dict[str, Any]) -> None:
        self.url = f"http://127.0.0.1:{port}/api/{project['project_id']}/envelope/"
        self.headers = {
            "Content-Encoding": "gzip",
            "Content-Type": "application/x-sentry-envelope",
            "X-Sentry-Auth": f"Sentry sentry_version=7, sentry_key={project['app_key']}, sentry_client=crash/1",
        }
        self.payloads = [json.loads(line)["payload"] for line in event_lines(ENVELOPES).splitlines()]
        self.answered: list[str] = []
        self.resent = 0
        self.refused: list[str] = []
        self._lock = threading.Lock()
        self._threads = [
            threading.Thread(target=self._send, args=(self.payloads[n::ENVELOPE_CLIENTS],), daemon=True)
            for n in range(ENVELOPE_CLIENTS)
        ]
        for thread in self._threads:
            thread.start()

    def _send(self, payloads: list[dict[str, Any]]) -> None:
        with httpx.Client(timeout=30.0) as http:
            for payload in payloads:
                body = b"\n".join(
                    [
                        json.dumps({"event_id": payload["event_id"]}).encode(),
                        json.dumps({"type": "event"}).encode(),
                        json.dumps(payload).encode(),
                    ]
                )
                while True:
                    try:
                        answer = http.post(self.url, content=gzip.compress(body), headers=self.headers)
                    except httpx.HTTPError:
                        with self._lock:
                            self.resent += 1
                        time.sleep(0.2)
                        continue
                    if answer.status_code == 200:
                        with self._lock:
                            self.answered.append(payload["event_id"])
                        break
                    if answer.status_code >= 500:
                        with self._lock:
                            self.refused.append(f"{answer.status_code}: {answer.text[:200]}")
                        time.sleep(0.2)
                        continue
                    with self._lock:
                        self.refused.append(f"{answer.status_code}: {answer.text[:200]}")
                    break

    def done(self) -> bool:
        return not any(thread.is_alive() for thread in self._threads)


def write_config(path: Path, api_key: str, app_key: str, port: int, storage: Path, batch_size: int) -> None:
    """`stacklens.yaml` with quick retries: a restart takes seconds, and the test waits for the drain."""
    document = {
        "stacklens": {
            "apiKey": api_key,
            "appKey": app_key,
            "baseUrl": f"http://127.0.0.1:{port}",
            "storagePath": str(storage),
            "allowInsecureHttp": True,
            "batchSize": batch_size,
            "flushInterval": "200ms",
            "commitInterval": "200ms",
            "retryBackoff": "200ms",
            "retryBackoffMax": "1s",
            "parkDelay": "500ms",
            "timeout": "30s",
        }
    }
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        yaml.safe_dump(document, handle)


def sent(proc: Proc) -> list[int]:
    """The lines of each batch the shipper has had accepted (its `Batch sent: <n> events` log lines)."""
    return [int(n) for n in re.findall(r"Batch sent: (\d+) events", proc.output())]


def serve(stack: Stack, port: int, schedules: bool) -> Proc:
    """`stacklens serve` on ``port``, healthy; the ingest workers off (these batches are below the size they
    take, and a killed server's workers would outlive it)."""
    server = stack.start(
        "server",
        [str(BIN / "stacklens"), "serve", "--port", str(port)],
        STACKLENS_RUN_SCHEDULES=str(schedules).lower(),
        STACKLENS_INGEST_WORKERS="0",
    )
    wait_healthy(f"http://127.0.0.1:{port}", server)
    return server


def run_pipelines_until_idle(stack: Stack) -> list[dict[str, Any]]:
    """`stacklens pipelines run` of the issues' jobs (through the server) until they find nothing new; every
    outcome it printed. (The budgets, alerts and integrations jobs run on every call: they have no new-data
    plan.)"""
    seen: list[dict[str, Any]] = []
    argv = [str(BIN / "stacklens"), "pipelines", "run", "--json", "--select", "issues"]
    for _ in range(5):
        ran = stack.run(argv, timeout=120)
        assert ran.returncode == 0, (
            f"`stacklens pipelines run` failed:\n{ran.stdout[-1500:]}{ran.stderr[-1500:]}"
        )
        answer = json.loads(ran.stdout)
        assert answer["via"] == "server"
        if not answer["outcomes"]:
            return seen
        seen += answer["outcomes"]
    raise AssertionError(f"the pipelines never ran out of work: {seen[-3:]}")


def warehouse_figures(stack: Stack, project_ids: list[int]) -> dict[str, Any]:
    """Every project's counters against its stored events, read by a process of its own from the warehouse the
    stopped server left (the embedded engine opens in one process at a time)."""
    result = subprocess.run(
        [sys.executable, "-m", "tests.pipelines.counter_figures", *map(str, project_ids)],
        capture_output=True,
        text=True,
        env={**stack.env, "PYTHONPATH": str(REPO)},
        cwd=stack.root,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_counters_equal_the_events_after_three_kills(tmp_path: Path) -> None:
    stack = Stack(tmp_path, clean_env(tmp_path / "data"))
    try:
        with stack.reporting():
            deliver_through_three_kills(stack)
    finally:
        stack.close()


def deliver_through_three_kills(stack: Stack) -> None:
    stacklens = str(BIN / "stacklens")
    org = stack.run_json([stacklens, "admin", "create-org", "--json", "--name", "Crashes",
                          "--owner-email", "owner@crashes.example", "--password", "crash-test-123"])  # fmt: skip
    sentry = stack.run_json(
        [stacklens, "admin", "create-project", "--json", "--org", "Crashes", "--name", "Sentry clients"]
    )
    projects = {
        size: stack.run_json(
            [
                stacklens,
                "admin",
                "create-project",
                "--json",
                "--org",
                "Crashes",
                "--name",
                f"Batches of {size}",
            ]
        )
        for size in LINES
    }
    port = free_port()
    configs: dict[int, Path] = {}
    for size, lines in LINES.items():
        storage = stack.root / f"logs-{size}"
        storage.mkdir()
        today = time.strftime("%Y-%m-%d", time.gmtime())
        (storage / f"stacklens-{today}.log").write_bytes(event_lines(lines) + b"\n")
        configs[size] = stack.root / f"stacklens-{size}.yaml"
        write_config(configs[size], org["api_key"], projects[size]["app_key"], port, storage, size)

    server = serve(stack, port, schedules=False)
    shippers = {
        size: stack.start(f"shipper-{size}", [str(BIN / "stacklens-shipper"), "--config", str(c), "--record"])
        for size, c in configs.items()
    }
    clients = EnvelopeClients(port, sentry)
    for kill in range(1, KILLS + 1):
        # The largest batches' shipper has just had batch `kill` accepted: it is sending the next, the others
        # are mid-stream.
        wait_for(f"batch {kill} of 1,000 lines", lambda k=kill: len(sent(shippers[1000])) >= k, 120, 0.02)
        server.popen.send_signal(signal.SIGKILL)
        server.popen.wait(10)
        server = serve(stack, port, schedules=kill == KILLS)
    wait_for(
        "every shipper to drain",
        lambda: all(sum(sent(shippers[size])) == lines for size, lines in LINES.items()),
        240,
        0.5,
    )
    wait_for("every envelope to be answered", clients.done, 240, 0.5)
    assert not [r for r in clients.refused if not r.startswith("5")], clients.refused[:5]
    assert sorted(clients.answered) == sorted(p["event_id"] for p in clients.payloads)
    print(f"envelopes sent again after a kill: {clients.resent}; answered 5xx: {len(clients.refused)}")
    for size, shipper in shippers.items():
        assert shipper.running(), f"the {size}-line shipper exited with {shipper.popen.returncode}"
        assert re.search(r"Retry attempt", shipper.output()), f"the {size}-line shipper never met a kill"
        assert shipper_status(stack, configs[size])["pending"] == {"bytes": 0, "lines": 0}

    outcomes = run_pipelines_until_idle(stack)
    # Each insert-time table's own check: it counts every stored event of the keys compared, after the repair.
    checks = [
        (name, ok) for o in outcomes for name, ok in o["checks"].items() if name.endswith("_matches_events")
    ]
    # When the third start's catch-up already ran the issues' jobs over everything, the command finds
    # nothing new and runs nothing: the counters are then compared with the stored events below, by a
    # process of its own.
    assert not outcomes or len({name for name, _ in checks}) == 5, outcomes
    assert all(ok for _, ok in checks), outcomes

    # What a user sees: every event of each project counted once in its issue list.
    with httpx.Client(
        base_url=f"http://127.0.0.1:{port}",
        timeout=30.0,
        headers={"Authorization": f"Bearer {org['api_key']}"},
    ) as api:
        for size, project in projects.items():
            issues = all_issues(api, project["slug"])
            assert sum(i["events"] for i in issues) == LINES[size], (size, [i["events"] for i in issues])
        issues = all_issues(api, sentry["slug"])
        assert sum(i["events"] for i in issues) == ENVELOPES, [i["events"] for i in issues]

    for shipper in shippers.values():
        assert shipper.stop(signal.SIGTERM) == 0
    assert server.stop(signal.SIGTERM) in (0, 130)
    errors = unhandled_errors(server.output())
    assert not errors, f"the server logged unhandled exceptions: {errors}"

    figures = warehouse_figures(stack, [p["project_id"] for p in [*projects.values(), sentry]])
    # Whether a kill fell between a batch's events and their views is up to the moment it lands: say what the
    # repair found (it shows with -s, and in a failure's report).
    print(f"landing attempts repaired after the kills: {figures['repaired_attempts']}")
    for size, project in projects.items():
        found = figures[str(project["project_id"])]
        assert found["stored"] == [LINES[size], LINES[size]], f"batches of {size}: stored {found['stored']}"
        assert found["differences"] == {}, f"batches of {size}: {found['differences']}"
    found = figures[str(sentry["project_id"])]
    assert found["stored"] == [ENVELOPES, ENVELOPES], f"envelopes: stored {found['stored']}"
    assert found["differences"] == {}, f"envelopes: {found['differences']}"
