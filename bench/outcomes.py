"""The outcomes' balance under faults: every item sent through the Sentry front door has exactly one outcome.

    .venv/bin/python bench/outcomes.py                 # ~1 minute: 16 senders, a fault every second or two
    .venv/bin/python bench/outcomes.py --senders 32 --seconds 20

A real server in this process (uvicorn on a loopback port, its own data directory, the embedded warehouse
and a SQLite control store). Senders post one-event envelopes (an error or a transaction, an attachment, a
client report, a session and a log item of two records, as SDKs send them) to two projects, the second held
to a quota of 60 items a minute; one envelope in twenty is malformed (400) and one request in ten gives up
after 50 ms (a sender that hangs up). Meanwhile the faults come one after another, each for about a second:
the spool on a read-only volume (when run as root), a full queue (the drains held, the queue's bound
lowered), a drain that fails, and a door slower than a request waits (its accept lock held; requests
answered 503 land later). At the end it prints, per category, the items sent and their outcomes by kind: the
balance (outcomes minus items) must be 0 in every row. It also prints what carrying a request's outcomes
costs (µs per request: making the object and resolving it, beside the one count the request made before).
"""

from __future__ import annotations

import argparse
import importlib
import json
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

QUOTA_PER_MINUTE = 60


def _event(kind: str) -> tuple[dict[str, Any], bytes, str]:
    now = time.time()
    if kind == "transaction":
        payload: dict[str, Any] = {
            "event_id": uuid.uuid4().hex,
            "type": "transaction",
            "transaction": "/checkout",
            "start_timestamp": now - 0.2,
            "timestamp": now,
            "contexts": {"trace": {"op": "http.server", "trace_id": uuid.uuid4().hex, "span_id": "a" * 16}},
            "spans": [],
        }
        return {"type": "transaction"}, json.dumps(payload).encode(), "transaction"
    payload = {
        "event_id": uuid.uuid4().hex,
        "timestamp": now,
        "platform": "python",
        "level": "error",
        "exception": {
            "values": [{"type": "RuntimeError", "value": f"checkout failed {random.randint(1, 9)}"}]
        },
    }
    return {"type": "event"}, json.dumps(payload).encode(), "error"


def _envelope(malformed: bool) -> tuple[bytes, Counter[str]]:
    """An envelope and its items by category."""
    header, payload, category = _event("transaction" if random.random() < 0.25 else "error")
    if malformed:
        payload = b"[1, 2]"  # an event item that is not a JSON object: the envelope is refused 400
    now = time.time()
    session = {"sid": uuid.uuid4().hex, "status": "ok", "started": now, "attrs": {"release": "web@1.0.0"}}
    logs = {"items": [{"timestamp": now, "level": "info", "body": f"line {n}"} for n in range(2)]}
    items = [
        (header, payload),
        ({"type": "attachment", "filename": "log.txt"}, b"hello"),
        ({"type": "client_report"}, json.dumps({"timestamp": now, "discarded_events": []}).encode()),
        ({"type": "session"}, json.dumps(session).encode()),
        ({"type": "log", "item_count": 2}, json.dumps(logs).encode()),
    ]
    parts = [b"{}"]
    for item_header, body in items:
        parts += [json.dumps({**item_header, "length": len(body)}).encode(), body]
    counts = Counter({category: 1, "attachment": 1, "client_report": 1, "session": 1, "log": 2})
    return b"\n".join(parts) + b"\n", counts


@contextmanager
def _server(settings: Any) -> Iterator[str]:
    import uvicorn

    from stacklens.cli.app import build_app
    from stacklens.public_url import serving

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(build_app(serving(settings, "127.0.0.1", port)), port=port, log_level="critical")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)


class Faults:
    """The faults, one after another, each for about a second (run in a thread of its own)."""

    def __init__(self, settings: Any) -> None:
        self.settings = settings
        self.done: list[str] = []

    def run(self, stop: threading.Event) -> None:
        steps: list[tuple[str, Callable[[], None]]] = [
            ("read-only spool", self.read_only_spool),
            ("full queue", self.full_queue),
            ("failing drain", self.failing_drain),
            ("slow door", self.slow_door),
        ]
        while not stop.is_set():
            for name, step in steps:
                if stop.wait(1.0):
                    return
                step()
                self.done.append(name)

    def read_only_spool(self) -> None:
        import os

        from stacklens.ingest.front_door import front_door

        if os.geteuid() != 0 or shutil.which("mount") is None:
            return
        front_door(self.settings).settle_spooled(30)  # the journals written so far land before the mount
        folder = self.settings.data_dir / "front_door"
        mounted = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", str(folder)], capture_output=True
        )
        if mounted.returncode != 0:
            return
        try:
            time.sleep(1.0)
        finally:
            subprocess.run(["umount", str(folder)], check=True)

    def full_queue(self) -> None:
        import stacklens.ingest.front_door.door as door_module
        from stacklens.ingest.front_door import drains_held

        bound = door_module.MAX_ROWS_WAITING
        door_module.MAX_ROWS_WAITING = 20
        try:
            with drains_held(self.settings):
                time.sleep(1.0)
        finally:
            door_module.MAX_ROWS_WAITING = bound

    def failing_drain(self) -> None:
        from stacklens.ingest.front_door import front_door

        door = front_door(self.settings)
        drain = door.drainer.drain
        failed = threading.Event()

        def failing(*args: Any, **kwargs: Any) -> None:
            if not failed.is_set():
                failed.set()
                raise RuntimeError("bench: the warehouse refused the insert")
            drain(*args, **kwargs)

        door.drainer.drain = failing
        failed.wait(3.0)
        time.sleep(1.0)
        del door.drainer.drain

    def slow_door(self) -> None:
        from stacklens.ingest.front_door import front_door

        landing: Any = importlib.import_module("api.landing")  # its WAIT_SECONDS, shortened for the fault
        wait = landing.WAIT_SECONDS
        landing.WAIT_SECONDS = 0.3
        door = front_door(self.settings)
        door.acceptor.accepting.acquire()
        try:
            time.sleep(1.0)
        finally:
            door.acceptor.accepting.release()
            landing.WAIT_SECONDS = wait


def _send(base: str, projects: list[dict[str, Any]], seconds: float, senders: int) -> tuple[Counter, Counter]:
    sent: Counter[tuple[int, str]] = Counter()
    answers: Counter[str] = Counter()
    lock = threading.Lock()
    deadline = time.monotonic() + seconds

    def sender(number: int) -> None:
        rng = random.Random(number)
        with httpx.Client(timeout=60) as http:
            while time.monotonic() < deadline:
                project = projects[rng.randrange(len(projects))]
                body, items = _envelope(malformed=rng.random() < 0.05)
                hang_up = rng.random() < 0.1
                with lock:
                    for category, n in items.items():
                        sent[(project["id"], category)] += n
                try:
                    answer = http.post(
                        f"{base}/api/{project['id']}/envelope/",
                        params={"sentry_key": project["key"]},
                        content=body,
                        timeout=0.05 if hang_up else 60,
                    )
                    code = str(answer.status_code)
                except httpx.TimeoutException:
                    code = "hung up"
                with lock:
                    answers[code] += 1

    threads = [threading.Thread(target=sender, args=(n,)) for n in range(senders)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sent, answers


def _cost(settings: Any, org_id: int, requests: int = 20_000, repeats: int = 15) -> tuple[float, float]:
    """µs per request, the best of ``repeats`` runs (the machine is shared): the one count a request made
    before, and a ManagedOutcomes made and accepted (that count included)."""
    from stacklens.outcomes import tally
    from stacklens.outcomes.managed import ManagedOutcomes

    outcomes = Counter({(1, "error", "accepted", ""): 1, (1, "client_report", "accepted", ""): 1})

    def best(call: Callable[[], None]) -> float:
        runs = []
        for _ in range(repeats):
            started = time.perf_counter()
            for _ in range(requests):
                call()
            runs.append((time.perf_counter() - started) / requests * 1e6)
        return min(runs)

    before = best(lambda: tally.count_outcomes(settings, org_id, outcomes))
    after = best(lambda: ManagedOutcomes(settings, org_id, outcomes).accept())
    tally.flush_all()
    return before, after


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--senders", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=12.0, help="how long the senders send")
    args = parser.parse_args()

    from stacklens.control.accounts import create_organization
    from stacklens.control.db import migrate_control_store, session_scope
    from stacklens.control.project_quotas import set_project_quota
    from stacklens.control.projects import create_project
    from stacklens.ingest.front_door import settle_front_doors
    from stacklens.outcomes.reads import OutcomeQuery, outcome_rows
    from stacklens.settings import Settings, override_settings
    from stacklens.warehouse.client import get_warehouse
    from stacklens.warehouse.migrations import apply_migrations

    work = Path(tempfile.mkdtemp(prefix="stacklens-bench-outcomes-"))
    settings = Settings(data_dir=work / "data", warehouse_database="bench", run_schedules=False)
    settings.data_dir.mkdir(parents=True)
    override_settings(settings)
    apply_migrations(settings)
    migrate_control_store(settings)
    with session_scope(settings) as session:
        org, _ = create_organization(session, "Bench", "bench@example.test", "bench-password-123")
        shop, shop_key = create_project(session, org.id, "Shop")
        held, held_key = create_project(session, org.id, "Held")
        set_project_quota(session, org.id, held.id, QUOTA_PER_MINUTE, {})
        org_id = org.id
        projects = [{"id": shop.id, "key": shop_key}, {"id": held.id, "key": held_key}]

    faults = Faults(settings)
    stop = threading.Event()
    with _server(settings) as base:
        driver = threading.Thread(target=faults.run, args=(stop,))
        driver.start()
        started = time.perf_counter()
        sent, answers = _send(base, projects, args.seconds, args.senders)
        elapsed = time.perf_counter() - started
        stop.set()
        driver.join()
        settle_front_doors(120)
        try:
            from stacklens.outcomes.managed import settled_later
        except ImportError:  # a tree before stacklens.outcomes.managed (the "before" figures)
            time.sleep(1.0)
        else:
            settled_later()
        rows = outcome_rows(settings, get_warehouse(settings), org_id, OutcomeQuery(), {}, datetime.now(UTC))
    counted: Counter[tuple[int, str]] = Counter()
    kinds: dict[tuple[int, str], Counter[str]] = {}
    for row in rows:
        counted[(row.project_id, row.category)] += row.quantity
        kinds.setdefault((row.project_id, row.category), Counter())[
            f"{row.outcome}/{row.reason}" if row.reason else row.outcome
        ] += row.quantity

    requests = sum(answers.values())
    print(
        f"{requests:,} requests in {elapsed:.1f} s from {args.senders} senders; faults: {', '.join(faults.done)}"
    )
    print("answers: " + ", ".join(f"{code} {n:,}" for code, n in sorted(answers.items())))
    print(f"{'project':>7} {'category':<13} {'sent':>7} {'outcomes':>8} {'balance':>7}  outcomes by kind")
    worst = 0
    names = {projects[0]["id"]: "shop", projects[1]["id"]: "held"}
    for key in sorted(set(sent) | set(counted)):
        balance = counted[key] - sent[key]
        worst = max(worst, abs(balance))
        detail = ", ".join(f"{kind} {n:,}" for kind, n in sorted(kinds.get(key, Counter()).items()))
        print(
            f"{names.get(key[0], key[0]):>7} {key[1]:<13} {sent[key]:>7,} {counted[key]:>8,} {balance:>+7}  {detail}"
        )
    try:
        before, after = _cost(settings, org_id)
        print(f"carrying a request's outcomes: {after:.1f} µs per request (one count alone: {before:.1f} µs)")
    except ImportError:
        pass
    override_settings(None)
    shutil.rmtree(work, ignore_errors=True)
    print("balance: every item has exactly one outcome" if worst == 0 else f"balance: off by up to {worst}")
    return 0 if worst == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
