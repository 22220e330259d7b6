"""Ingest throughput: real sentry-sdk payloads through `POST /api/ingest` of a real `stacklens serve`.

    .venv/bin/python bench/ingest.py                 # ~2 minutes: 3,000 lines per batch size, 3 rounds
    .venv/bin/python bench/ingest.py --events 20000  # the full run
    .venv/bin/python bench/ingest.py --batches 1,10 --clients 8 --events 2000 --rounds 2  # small requests

Builds a corpus with sentry-sdk itself (errors from varied stacks with local variables, breadcrumbs and
request data; transactions with spans), starts `stacklens serve` as a subprocess on a loopback port with its
own data directory, creates an organization and project with `stacklens admin … --json`, posts gzip batches
of 100 and 1000 lines, and prints events/s, MB/s (uncompressed NDJSON) and p50/p99 batch latency. In the
same run it measures the limit: the rows of the same lines inserted by the embedded engine with
`INSERT … FORMAT JSONEachRow` into tables of the same shape (the served schema, with the materialized views
every insert into `events` runs; "raw" is the raw tables alone), and prints the ratio API / limit. Rounds
alternate API and limit runs and the medians are printed, so a burst of load on a shared machine skews one
round rather than the figure. "cpu ratio" compares events per CPU-second (the CPU of the server process and
its ingest worker processes for the API, this process's for the limit): how much work an event costs,
whichever cores it runs on. The server prepares large batches in worker processes
(`STACKLENS_INGEST_WORKERS`, 2 by default on this machine), so "ratio" is the throughput of the machine's
cores against the engine's; both figures are printed.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import psutil
import sentry_sdk
from sentry_sdk.transport import Transport

ROOT = Path(__file__).resolve().parent.parent
STACKLENS = [sys.executable, "-m", "stacklens.cli.main"]


class _Collect(Transport):
    def __init__(self, options: dict[str, Any] | None = None) -> None:
        super().__init__(options)
        self.items: list[tuple[str, dict[str, Any]]] = []

    def capture_envelope(self, envelope: Any) -> None:
        for item in envelope.items:
            self.items.append((item.type, item.payload.json or json.loads(item.payload.bytes)))


# Varied stacks: several crash sites, callers and depths, so grouping and frames do real work.
def _parse_price(text: str) -> float:
    return float(text)


def _load_user(users: dict[str, Any], user_id: str) -> Any:
    return users[user_id]


def _apply_discount(total: float, percent: int) -> float:
    return total / (100 - percent - 100 + percent)


def _handler(kind: int, depth: int, rng: random.Random) -> Any:
    order = {
        "id": rng.randint(1, 10**6),
        "items": [rng.randint(1, 99) for _ in range(5)],
        "password": "s3cret",
    }
    if depth > 0:
        return _handler(kind, depth - 1, rng)
    if kind == 0:
        return _parse_price(f"{rng.random():.2f}EUR")
    if kind == 1:
        return _load_user({"a": order}, f"user-{rng.randint(1, 999)}")
    return _apply_discount(100.0, 10)


def build_corpus(count: int, app_key: str, seed: int = 7) -> list[dict[str, Any]]:
    """``count`` log-line objects (docs/architecture.md §11.1): ~70 % errors, ~30 % transactions with
    spans."""
    rng = random.Random(seed)
    transport = _Collect()
    client = sentry_sdk.Client(
        dsn="https://public@stacklens.invalid/1",
        transport=transport,
        default_integrations=False,
        include_local_variables=True,
        traces_sample_rate=1.0,
        release="shop@2.0.0",
        environment="production",
        server_name="bench-1",
    )
    with sentry_sdk.isolation_scope() as scope:
        scope.set_client(client)
        for i in range(count):
            with sentry_sdk.new_scope() as inner:
                inner.set_user({"id": f"u{rng.randint(1, 500)}", "email": f"user{i % 97}@example.com"})
                inner.set_tag("route", rng.choice(["/cart", "/orders/{id}", "/login"]))
                for b in range(rng.randint(2, 8)):
                    sentry_sdk.add_breadcrumb(
                        category=rng.choice(["http", "ui", "console"]), message=f"step {b} of {i}"
                    )
                inner.set_context(
                    "request_extra", {"path": f"/orders/{rng.randint(1, 9999)}", "query": "token=abc&page=2"}
                )
                if rng.random() < 0.7:
                    try:
                        _handler(rng.randint(0, 2), rng.randint(0, 6), rng)
                    except Exception as exc:  # noqa: BLE001 - capturing is the point
                        sentry_sdk.capture_exception(exc)
                else:
                    with sentry_sdk.start_transaction(
                        op="http.server", name=f"/orders/{rng.randint(1, 50)}"
                    ) as txn:
                        for s in range(rng.randint(2, 12)):
                            with sentry_sdk.start_span(
                                op=rng.choice(["db", "http.client", "cache.get"]), name=f"q{s}"
                            ) as span:
                                span.set_data("http.response.status_code", rng.choice([200, 200, 404, 500]))
                        txn.set_http_status(200)
    client.flush()
    lines = []
    for item_type, payload in transport.items:
        if item_type in ("event", "transaction"):
            lines.append(
                {
                    "v": 1,
                    "type": item_type,
                    "app_key": app_key,
                    "ts": payload.get("timestamp"),
                    "payload": payload,
                }
            )
    return lines[:count]


def fresh_ids(lines: list[dict[str, Any]]) -> list[bytes]:
    """The corpus with new event ids, so each measured run lands rather than deduplicates."""
    out = []
    for obj in lines:
        obj["payload"]["event_id"] = uuid.uuid4().hex
        out.append(json.dumps(obj).encode())
    return out


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _cli(env: dict[str, str], *args: str) -> dict[str, Any]:
    done = subprocess.run([*STACKLENS, *args], env=env, cwd=ROOT, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"stacklens {' '.join(args[:2])} failed: {done.stderr.strip()}")
    return json.loads(done.stdout)


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _cpu_seconds(process: psutil.Process) -> float:
    """CPU of the server and of its ingest worker processes (children, alive ones read directly)."""
    total = 0.0
    for each in [process, *process.children(recursive=True)]:
        try:
            times = each.cpu_times()
        except psutil.NoSuchProcess:
            continue
        total += times.user + times.system
    return total


def run_api(
    base: str, api_key: str, lines: list[bytes], batch: int, server: psutil.Process, clients: int = 1
) -> dict[str, float]:
    """Figures of posting ``lines`` in batches from ``clients`` threads (one connection each);
    ``events_cpu_s`` is events per CPU-second of the server."""
    batches = [b"\n".join(lines[i : i + batch]) + b"\n" for i in range(0, len(lines), batch)]
    bodies = [gzip.compress(b, compresslevel=6) for b in batches]
    latencies, accepted = [], 0
    headers = {
        "Authorization": f"Bearer {api_key}",
        "Content-Encoding": "gzip",
        "Content-Type": "application/x-ndjson",
    }
    guard = threading.Lock()

    def send(share: list[bytes]) -> None:
        nonlocal accepted
        with httpx.Client(base_url=base, timeout=120) as http:
            for body in share:
                t0 = time.perf_counter()
                response = http.post(
                    "/api/ingest", content=body, headers={**headers, "Idempotency-Key": uuid.uuid4().hex}
                )
                spent = time.perf_counter() - t0
                if response.status_code != 200:
                    raise SystemExit(f"ingest answered {response.status_code}: {response.text[:300]}")
                with guard:
                    latencies.append(spent)
                    accepted += response.json()["accepted"]

    started, cpu_started = time.perf_counter(), _cpu_seconds(server)
    with ThreadPoolExecutor(clients) as pool:
        list(pool.map(send, [bodies[i::clients] for i in range(clients)]))
    elapsed, cpu = time.perf_counter() - started, _cpu_seconds(server) - cpu_started
    raw_mb = sum(len(b) for b in batches) / 1e6
    return {
        "events_s": accepted / elapsed,
        "mb_s": raw_mb / elapsed,
        "p50_ms": statistics.median(latencies) * 1000,
        "p99_ms": _percentile(latencies, 0.99) * 1000,
        "accepted": accepted,
        "events_cpu_s": accepted / max(cpu, 1e-9),
    }


def run_limit(data_dir: Path, lines: list[bytes], batch: int, *, views: bool) -> tuple[float, float]:
    """Events/s and events per CPU-second of the bare engine: the same lines' rows inserted with
    INSERT … FORMAT JSONEachRow (CPU of this process, the engine's threads included).

    ``views``: into the schema as served (the raw tables with the materialized views later layers hang on
    ``events``, which every insert runs); else into the raw tables alone (migrations 0001–0099).
    """
    from stacklens.ingest.prepare import prepare_lines
    from stacklens.ingest.prepared_rows import Attribution, BatchContext
    from stacklens.settings import Settings
    from stacklens.warehouse.client import get_warehouse
    from stacklens.warehouse.migrations import apply_migrations

    database = "limit_views" if views else "limit_raw"
    settings = Settings(data_dir=data_dir, warehouse_database=database, run_schedules=False)
    apply_migrations(settings, up_to=None if views else 99)
    client = get_warehouse(settings)
    prepared = []
    for i in range(0, len(lines), batch):
        context = BatchContext(1, "limit", time.time(), None)
        part = prepare_lines(lines[i : i + batch], 1, context, lambda _key: Attribution(1, None, 1))
        blocks = {t: b"".join(row[3] + b"\n" for row in rows) for t, rows in part.tables.items()}
        blocks["spans"] = b"".join(s + b"\n" for rows in part.tables.values() for row in rows for s in row[4])
        prepared.append(blocks)
    started, cpu_started = time.perf_counter(), time.process_time()
    for blocks in prepared:
        for table, block in blocks.items():
            if block.strip():
                client.raw_insert(
                    table,
                    insert_block=block,
                    fmt="JSONEachRow",
                    settings={
                        "date_time_input_format": "best_effort",
                        "input_format_json_read_objects_as_strings": 1,
                    },
                )
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    return len(lines) / elapsed, len(lines) / max(cpu, 1e-9)


def _print_row(batch: int, label: str, figures: dict[str, float]) -> None:
    print(
        f"{batch:>6} {label:>5} {figures['events_s']:>10.0f} {figures['mb_s']:>7.2f} {figures['p50_ms']:>8.1f} "
        f"{figures['p99_ms']:>8.1f} {figures['limit']:>11.0f} {figures['raw']:>9.0f} {figures['ratio']:>6.2f} "
        f"{figures['cpu_ratio']:>9.2f}",
        flush=True,
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--events", type=int, default=3000, help="lines per batch size (default 3000, ~1 minute)"
    )
    parser.add_argument("--batches", default="100,1000", help="batch sizes, comma-separated")
    parser.add_argument(
        "--clients", type=int, default=1, help="concurrent senders, one connection each (default 1)"
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=3,
        help="API and limit runs alternate this many times per batch size; medians are reported, so a "
        "burst of load from other processes on a shared machine skews one round, not the figure",
    )
    args = parser.parse_args()
    sizes = [int(s) for s in args.batches.split(",")]
    work = Path(tempfile.mkdtemp(prefix="stacklens-bench-"))
    port = _free_port()
    env = {
        **os.environ,
        "STACKLENS_DATA_DIR": str(work / "server"),
        "STACKLENS_RUN_SCHEDULES": "false",
        "STACKLENS_PORT": str(port),
        "PYTHONPATH": str(ROOT),
    }
    for name in ("STACKLENS_WAREHOUSE_URL", "STACKLENS_DATABASE_URL", "STACKLENS_WAREHOUSE_DATABASE"):
        env.pop(name, None)
    org = _cli(
        env,
        "admin",
        "create-org",
        "--name",
        "Bench",
        "--owner-email",
        "bench@example.com",
        "--password",
        "bench-password-1",
        "--json",
    )
    project = _cli(env, "admin", "create-project", "--org", "Bench", "--name", "Shop", "--json")
    subprocess.run(
        [*STACKLENS, "admin", "set-quota", "--org", "Bench", "--events-per-minute", "100000000"],
        env=env,
        cwd=ROOT,
        check=True,
        capture_output=True,
    )
    print(f"building a corpus of {args.events} lines with sentry-sdk ...", flush=True)
    corpus = build_corpus(args.events, project["app_key"])
    server = subprocess.Popen(
        [*STACKLENS, "serve", "--host", "127.0.0.1", "--port", str(port)],
        env=env,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                if httpx.get(f"{base}/api/health", timeout=1).status_code in (200, 503):
                    break
            except httpx.HTTPError:
                time.sleep(0.2)
        else:
            raise SystemExit("stacklens serve did not answer within 60 s")
        print(
            f"{'batch':>6} {'round':>5} {'events/s':>10} {'MB/s':>7} {'p50 ms':>8} {'p99 ms':>8} "
            f"{'limit ev/s':>11} {'raw ev/s':>9} {'ratio':>6} {'cpu ratio':>9}"
        )
        for batch in sizes:
            rounds = []
            for index in range(1, args.rounds + 1):
                lines = fresh_ids(corpus)
                api = run_api(base, org["api_key"], lines, batch, psutil.Process(server.pid), args.clients)
                limit, limit_cpu = run_limit(work / "limit", lines, batch, views=True)
                raw, _ = run_limit(work / "limit", lines, batch, views=False)
                figures = api | {
                    "limit": limit,
                    "raw": raw,
                    "ratio": api["events_s"] / limit,
                    "cpu_ratio": api["events_cpu_s"] / limit_cpu,
                }
                rounds.append(figures)
                _print_row(batch, str(index), figures)
            _print_row(batch, "med", {k: statistics.median(r[k] for r in rounds) for k in rounds[0]})
    finally:
        server.terminate()
        server.wait(timeout=30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
