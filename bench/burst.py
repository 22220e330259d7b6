"""Bursts: 8 shippers deliver ten times the sustained rate for 60 s against one `stacklens serve`.

    .venv/bin/python bench/burst.py                       # sustained 100 events/s, burst 1,000/s for 60 s
    .venv/bin/python bench/burst.py --rate 100 --seconds 30

Self-hosted error trackers are known to fall over on bursts of a few thousand events; this measures what ours
does with one. `stacklens serve` runs as a subprocess with its own data directory, its pipeline schedules on
(as in production: the marts' ticks share the cores with the burst) and the organization's DEFAULT quota
(60,000 events a minute), so a burst above 1,000 events a second is answered partly with 429 and Retry-After,
and the shippers must hold and resend what was refused.

Eight applications each append log lines (docs/architecture.md §11.1: 80 % error events of ten kinds, 20 %
browser page loads
with their spans) to their own storage path at a tenth of the burst each (writes every 100 ms, O_APPEND), and
eight `stacklens-shipper --record` processes deliver them (batches of 100, flush 200 ms). During the burst a
reader polls the issue list and the performance overview over the JSON API, as a dashboard user would.

Printed: lines written, accepted and duplicates (the shippers' own counters), the 429 answers the shippers
met and the shortest wait they took after one (Retry-After honoured), events lost (lines written minus rows in
the warehouse, counted by event id once the server has stopped: must be 0), time to drain (burst end → every
shipper's backlog acknowledged), the server's peak RSS and thread count (its ingest workers included), and the
median / p95 of the two reads during the burst (goal ≤ 500 ms).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
from shipper_targets import Service

# bench/shipper.py's helpers, loaded by path: its module name is the shipper package's.
_spec = importlib.util.spec_from_file_location("bench_shipper", Path(__file__).with_name("shipper.py"))
assert _spec is not None and _spec.loader is not None
bench_shipper: Any = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench_shipper)
log_line, shipper_status, write_config = (
    bench_shipper.log_line,
    bench_shipper.shipper_status,
    bench_shipper.write_config,
)

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
SHIPPER = ROOT / ".venv" / "bin" / "stacklens-shipper"
SHIPPERS = 8
ERROR_KINDS = [
    ("KeyError", "'cart_id'"),
    ("ValueError", "invalid literal for int() with base 10: 'abc'"),
    ("TimeoutError", "payment gateway did not answer in 5 s"),
    ("ZeroDivisionError", "division by zero"),
    ("AttributeError", "'NoneType' object has no attribute 'email'"),
    ("IndexError", "list index out of range"),
    ("PermissionError", "user may not edit order"),
    ("ConnectionError", "redis: connection refused"),
    ("TypeError", "unsupported operand type(s) for +: 'int' and 'str'"),
    ("LookupError", "no such product"),
]


def _error(kind: int) -> dict[str, Any]:
    exc_type, value = ERROR_KINDS[kind]
    frames = [
        {"filename": "shop/app.py", "function": "handle", "lineno": 40, "module": "shop.app"},
        {
            "filename": f"shop/{exc_type.lower()}.py",
            "function": "work",
            "lineno": 10 + kind,
            "module": "shop",
        },
    ]
    return {
        "level": "error",
        "platform": "python",
        "release": "shop@2.0.0",
        "environment": "production",
        "user": {"id": f"user-{random.randint(1, 500)}"},
        "exception": {"values": [{"type": exc_type, "value": value, "stacktrace": {"frames": frames}}]},
    }


def _pageload(rng: random.Random) -> dict[str, Any]:
    from demo import browser, browser_pageloads

    release = browser.ReleaseShape("shop@2.0.0", 400_000, True, 1.0)
    when = datetime.now(UTC)
    return browser_pageloads.pageload(rng, "https://shop.test", release, "production", when, None, False)


def _transaction_line(app_key: str, payload: dict[str, Any]) -> bytes:
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    line = {"v": 1, "type": "transaction", "app_key": app_key, "ts": now, "payload": payload}
    return json.dumps(line, separators=(",", ":")).encode() + b"\n"


@dataclass
class Writer:
    """One application: appends its share of the burst to its own log file every 100 ms."""

    directory: Path
    app_key: str
    per_second: float
    seconds: float
    seed: int
    written: int = 0
    event_ids: list[str] = field(default_factory=list)

    def run(self) -> None:
        rng = random.Random(self.seed)
        path = self.directory / f"stacklens-{datetime.now(UTC):%Y-%m-%d}.log"
        started = time.monotonic()
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            while (elapsed := time.monotonic() - started) < self.seconds:
                due = int(elapsed * self.per_second) + 1 - self.written
                chunk = []
                for _ in range(max(due, 0)):
                    if rng.random() < 0.2:
                        payload = _pageload(rng)
                        line = _transaction_line(self.app_key, payload)
                        self.event_ids.append(payload["event_id"])
                    else:
                        line = log_line(self.app_key, _error(rng.randrange(len(ERROR_KINDS))))
                        self.event_ids.append(json.loads(line)["payload"]["event_id"])
                    chunk.append(line)
                if chunk:
                    os.write(fd, b"".join(chunk))
                    self.written += len(chunk)
                time.sleep(0.1)
        finally:
            os.close(fd)


@dataclass
class Reader:
    """A dashboard user during the burst: the issue list and the performance overview, every 0.5 s each."""

    url: str
    api_key: str
    slug: str
    timings: dict[str, list[float]] = field(default_factory=lambda: {"issue list": [], "overview": []})
    failures: list[str] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        paths = {
            "issue list": f"/api/projects/{self.slug}/issues",
            "overview": f"/api/projects/{self.slug}/performance/overview?range=24h",
        }
        headers = {"Authorization": f"Bearer {self.api_key}"}
        with httpx.Client(base_url=self.url, headers=headers, timeout=30) as client:
            while not self.stop.is_set():
                for name, path in paths.items():
                    started = time.perf_counter()
                    answer = client.get(path)
                    self.timings[name].append((time.perf_counter() - started) * 1000)
                    if answer.status_code != 200:
                        self.failures.append(f"{name}: {answer.status_code} {answer.text[:120]}")
                self.stop.wait(0.5)


def _proc_tree(pid: int) -> list[int]:
    children = Path(f"/proc/{pid}/task/{pid}/children")
    kids = [int(p) for p in children.read_text().split()] if children.exists() else []
    return [pid] + [grandchild for kid in kids for grandchild in _proc_tree(kid)]


def _status_field(pid: int, name: str) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(name + ":"):
                return int(line.split()[1])
    except (FileNotFoundError, ProcessLookupError):
        pass
    return 0


@dataclass
class Footprint:
    """The server's RSS (its ingest worker processes included) and threads, sampled every 0.25 s."""

    pid: int
    peak_rss_kib: int = 0
    peak_threads: int = 0
    stop: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        while not self.stop.is_set():
            pids = _proc_tree(self.pid)
            self.peak_rss_kib = max(self.peak_rss_kib, sum(_status_field(p, "VmRSS") for p in pids))
            self.peak_threads = max(self.peak_threads, sum(_status_field(p, "Threads") for p in pids))
            self.stop.wait(0.25)


# The shipper's line for a refused batch: "Retry attempt 1/3 (429 Rate Limited: …; Retry-After 1s; waiting
# 1.1s)".
_WAIT = re.compile(r"Retry attempt \d+/\d+ \((429.*?); waiting ([0-9.]+)s\)")
_RETRY_AFTER = re.compile(r"Retry-After (\d+(?:\.\d+)?)s")


def _stored_ids(data_dir: Path) -> set[str]:
    """Event ids in the warehouse, read after the server stopped (the embedded engine allows one process)."""
    from stacklens.settings import Settings
    from stacklens.warehouse.client import get_warehouse

    client = get_warehouse(Settings(data_dir=data_dir))
    ids: set[str] = set()
    for query in (
        "SELECT DISTINCT replaceAll(toString(event_id), '-', '') FROM events",
        "SELECT DISTINCT replaceAll(toString(event_id), '-', '') FROM transactions",
    ):
        ids.update(row[0] for row in client.query(query).result_rows)
    return ids


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def run(
    rate: float, seconds: float, drain_limit: float, events_per_minute: int | None = None
) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="bench-burst-"))
    service = Service(work, raise_quota=False, schedules=True)
    if events_per_minute is not None:
        # A quota below the burst's rate makes the server answer 429 + Retry-After during it, so the run shows
        # the shippers holding what was refused and resending it after the wait.
        quota = service.admin("set-quota", "--org", "Bench", "--events-per-minute", str(events_per_minute))
        service.quota = (
            f"{quota['events_per_minute']:,} events/min, {quota['requests_per_second']:,} requests/s"
        )
    print(f"stacklens serve on {service.url}, data dir {work / 'server'}, quota {service.quota}", flush=True)
    slug = service.project_slug
    burst = rate * 10
    writers: list[Writer] = []
    shippers: list[tuple[subprocess.Popen[bytes], Path, Path]] = []
    try:
        for n in range(SHIPPERS):
            logs = work / f"app{n}" / "logs"
            logs.mkdir(parents=True)
            config = write_config(logs, service.url, service.api_key, service.app_key, 100)
            writers.append(Writer(logs, service.app_key, burst / SHIPPERS, seconds, seed=n))
            log_path = work / f"app{n}" / "shipper.log"
            with open(log_path, "wb") as out:
                proc = subprocess.Popen([str(SHIPPER), "--config", str(config), "--record"], stderr=out)
            shippers.append((proc, config, log_path))
        reader = Reader(service.url, service.api_key, slug)
        footprint = Footprint(service.proc.pid)
        threads = [threading.Thread(target=w.run) for w in writers]
        side = [threading.Thread(target=reader.run), threading.Thread(target=footprint.run)]
        for thread in side + threads:
            thread.start()
        print(f"burst: {burst:,.0f} events/s for {seconds:.0f} s over {SHIPPERS} shippers", flush=True)
        for thread in threads:
            thread.join()
        burst_end = time.monotonic()
        reader.stop.set()
        written = sum(w.written for w in writers)
        drained_after: float | None = None
        while time.monotonic() - burst_end < drain_limit:
            statuses = [shipper_status(config) for _, config, _ in shippers]
            if (
                all(s["pending"]["lines"] == 0 for s in statuses)
                and sum(s["counters"].get("events", 0) for s in statuses) >= written
            ):
                drained_after = time.monotonic() - burst_end
                break
            time.sleep(1.0)
        statuses = [shipper_status(config) for _, config, _ in shippers]
        footprint.stop.set()
        for thread in side:
            thread.join()
    finally:
        for proc, _, _ in shippers:
            proc.terminate()
        for proc, _, _ in shippers:
            proc.wait(60)
        service.close()
    logs_text = "\n".join(path.read_text(errors="replace") for _, _, path in shippers)
    waits = [float(match.group(2)) for match in _WAIT.finditer(logs_text)]
    # Each wait against the Retry-After the server sent with that 429: the shipper must never come back
    # sooner.
    asked = [_RETRY_AFTER.search(match.group(1)) for match in _WAIT.finditer(logs_text)]
    too_soon = sum(
        1 for wait, ra in zip(waits, asked, strict=True) if ra is not None and wait < float(ra.group(1))
    )
    expected = {event_id for w in writers for event_id in w.event_ids}
    stored = _stored_ids(work / "server")
    counters = [s["counters"] for s in statuses]
    return {
        "rate": rate,
        "burst": burst,
        "seconds": seconds,
        "written": written,
        "accepted": sum(c.get("accepted", 0) for c in counters),
        "duplicates": sum(c.get("duplicates", 0) for c in counters),
        "rejected": sum(c.get("rejected", 0) for c in counters),
        "answers_429": len(waits),
        "shortest_wait_s": min(waits) if waits else None,
        "waits_shorter_than_retry_after": too_soon,
        "lost": len(expected - stored),
        "drained_after_s": drained_after,
        "server_peak_rss_mib": footprint.peak_rss_kib / 1024,
        "server_peak_threads": footprint.peak_threads,
        "reads": {
            name: {
                "n": len(values),
                "median_ms": statistics.median(values) if values else None,
                "p95_ms": _percentile(values, 0.95),
            }
            for name, values in reader.timings.items()
        },
        "read_failures": reader.failures[:5],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=float, default=100.0, help="sustained events/s (the burst is 10x)")
    parser.add_argument("--seconds", type=float, default=60.0, help="length of the burst")
    parser.add_argument("--drain-limit", type=float, default=600.0, help="give up draining after this")
    parser.add_argument(
        "--events-per-minute",
        type=int,
        default=None,
        help="set the organization's quota to this (default: the default quota, 60,000 events/min)",
    )
    args = parser.parse_args()
    result = run(args.rate, args.seconds, args.drain_limit, args.events_per_minute)
    print(json.dumps(result, indent=2), flush=True)
    reads_ok = all((r["p95_ms"] or 0) <= 500 for r in result["reads"].values())
    print(
        f"written {result['written']:,}, accepted {result['accepted']:,}, 429 answers {result['answers_429']:,}"
        f" (shortest wait {result['shortest_wait_s']} s, {result['waits_shorter_than_retry_after']} shorter than"
        " Retry-After), lost {result['lost']}, drained after"
        f" {result['drained_after_s']} s, server peak RSS {result['server_peak_rss_mib']:.0f} MiB,"
        f" {result['server_peak_threads']} threads; reads p95 "
        + ", ".join(f"{k} {v['p95_ms']:.0f} ms" for k, v in result["reads"].items())
        + (" (goal <= 500 ms met)" if reads_ok else " (goal <= 500 ms MISSED)"),
        flush=True,
    )
    return 0 if result["lost"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
