"""The index of stored event ids (stacklens/ingest/stored_key_index.py): its merge, and the door across it.

    .venv/bin/python bench/key_index.py merge     # the merge at 1 M and 10 M stored keys (~1 min)
    .venv/bin/python bench/key_index.py door      # envelopes across merges, 10 M stored ids (~10 min)
    .venv/bin/python bench/key_index.py door --stored 1000000 --envelopes 30000

``merge``: what one merge of MERGE_AT new keys costs with 1 M and 10 M keys stored. *Before* is the
``np.union1d`` the accept step ran under its lock every MERGE_AT keys (every request waited for it); *after*
is the accept step's own share (the ``add`` whose key makes MERGE_AT: the merge started aside), the background
merge's duration, and the longest the calling thread was kept from running meanwhile (the merge's hold on the
interpreter lock: what a request on the event loop would wait).

``door``: a real `stacklens serve` whose warehouse holds ``--stored`` event ids (inserted by the engine
before the server starts; the server indexes them at start), then ``--envelopes`` one-event envelopes from
``--senders`` concurrent clients, each answer timed. Every envelope adds two keys to the index (its event id,
its batch), so 80,000 envelopes cross three merges. Goal (issue 63): p99 ≤ 100 ms, no answer over 250 ms.
"""

from __future__ import annotations

import argparse
import gzip
import importlib
import json
import os
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
import numpy as np

# bench/ingest.py, beside this file (bench/ is a folder of scripts, not a package).
sys.path.insert(0, str(Path(__file__).resolve().parent))
ingest_bench: Any = importlib.import_module("ingest")

from stacklens.ingest.stored_key_index import MERGE_AT, StoredKeyIndex  # noqa: E402


def _longest_stall(work: Any) -> tuple[float, float]:
    """Seconds ``work()`` took in another thread, and the longest this thread waited for a turn meanwhile."""
    done = threading.Event()
    took = [0.0]

    def run() -> None:
        started = time.perf_counter()
        work()
        took[0] = time.perf_counter() - started
        done.set()

    thread = threading.Thread(target=run)
    longest, last = 0.0, time.perf_counter()
    thread.start()
    while not done.is_set():
        time.sleep(0.001)
        now = time.perf_counter()
        longest, last = max(longest, now - last - 0.001), now
    thread.join()
    return took[0], longest


def bench_merge(sizes: list[int], rounds: int) -> None:
    rng = np.random.default_rng(63)
    print(f"{'stored':>11} {'round':>5} {'before s':>9} {'add ms':>7} {'merge ms':>9} {'stall ms':>9}")
    for stored in sizes:
        held = np.unique(rng.integers(0, 2**64, stored, dtype=np.uint64))
        for number in range(1, rounds + 1):
            fresh = rng.integers(0, 2**64, MERGE_AT, dtype=np.uint64)
            started = time.perf_counter()
            np.union1d(held, fresh)  # the merge as the accept step ran it
            before = time.perf_counter() - started

            index = StoredKeyIndex()
            index.load_digests(held)
            keys = [int(d) for d in fresh]
            index.add(keys[:-1])
            started = time.perf_counter()
            index.add(keys[-1:])  # the accept step's share: the set reaches MERGE_AT, the merge starts aside
            added = time.perf_counter() - started
            _, stall = _longest_stall(index.settle)
            assert index.merges == 1 and all(index.may_hold(d) for d in keys[:1000])
            print(
                f"{stored:>11,} {number:>5} {before:>9.2f} {added * 1000:>7.1f} "
                f"{index.last_merge_seconds * 1000:>9.0f} {stall * 1000:>9.1f}",
                flush=True,
            )


WINDOW_SECONDS = 10

# Event ids inserted by the engine itself, a million a statement (10 M rows through the events table's views).
PRELOAD = """
from stacklens.settings import Settings
from stacklens.warehouse.client import get_warehouse
from stacklens.warehouse.migrations import apply_migrations
settings = Settings()
apply_migrations(settings)
client = get_warehouse(settings)
for start in range(0, {stored}, 1_000_000):
    client.command(
        "INSERT INTO events (org_id, project_id, event_id, timestamp) "
        "SELECT {org}, {project}, generateUUIDv4(number), now() - toIntervalSecond(number % 86400) "
        "FROM numbers(" + str(start) + ", " + str(min(1_000_000, {stored} - start)) + ")"
    )
print(client.query("SELECT count() FROM events").result_rows[0][0])
"""


def _envelope(payload: dict[str, Any]) -> bytes:
    body = json.dumps(payload).encode()
    kind = "transaction" if payload.get("type") == "transaction" else "event"
    header = json.dumps({"event_id": payload["event_id"], "sent_at": "2026-11-28T00:00:00Z"}).encode()
    return b"\n".join([header, json.dumps({"type": kind, "length": len(body)}).encode(), body]) + b"\n"


def bench_door(stored: int, envelopes: int, senders: int) -> None:
    work = Path(tempfile.mkdtemp(prefix="stacklens-bench-key-index-"))
    port = ingest_bench._free_port()
    env = {
        **os.environ,
        "STACKLENS_DATA_DIR": str(work / "server"),
        "STACKLENS_RUN_SCHEDULES": "false",
        "STACKLENS_PORT": str(port),
        "PYTHONPATH": str(ingest_bench.ROOT),
        # Spike protection lifted (as bench/peers.py does): at its floor of 10,000 events a minute it refused
        # half of a quiet run's envelopes (429: they add no keys), so the run crossed one merge, not three.
        "STACKLENS_SPIKE_FLOOR_PER_MINUTE": "100000000",
    }
    for name in ("STACKLENS_WAREHOUSE_URL", "STACKLENS_DATABASE_URL", "STACKLENS_WAREHOUSE_DATABASE"):
        env.pop(name, None)
    org = ingest_bench._cli(
        env, "admin", "create-org", "--name", "Bench", "--owner-email", "bench@example.com",
        "--password", "bench-password-1", "--json",
    )  # fmt: skip
    project = ingest_bench._cli(env, "admin", "create-project", "--org", "Bench", "--name", "Shop", "--json")
    subprocess.run(
        [*ingest_bench.STACKLENS, "admin", "set-quota", "--org", "Bench", "--events-per-minute", "100000000"],
        env=env, cwd=ingest_bench.ROOT, check=True, capture_output=True,
    )  # fmt: skip
    started = time.perf_counter()
    script = PRELOAD.format(stored=stored, org=org["org_id"], project=project["project_id"])
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, cwd=ingest_bench.ROOT, capture_output=True, text=True
    )
    if done.returncode != 0:
        raise SystemExit(f"preloading the event ids failed: {done.stderr.strip()[-2000:]}")
    print(f"{int(done.stdout.split()[-1]):,} event ids stored in {time.perf_counter() - started:.0f} s")

    corpus = [
        json.loads(line)["payload"] for line in ingest_bench.fresh_ids(ingest_bench.build_corpus(500, "x"))
    ]
    path = f"/api/{project['project_id']}/envelope/?sentry_key={project['app_key']}"
    headers = {"Content-Encoding": "gzip", "Content-Type": "application/x-sentry-envelope"}
    base = f"http://127.0.0.1:{port}"
    auth = {"Authorization": f"Bearer {org['api_key']}"}
    server = subprocess.Popen(
        [*ingest_bench.STACKLENS, "serve", "--host", "127.0.0.1", "--port", str(port)],
        env=env, cwd=ingest_bench.ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        started, indexed = time.perf_counter(), 0
        while time.perf_counter() - started < 900:
            try:
                door = httpx.get(f"{base}/api/health", headers=auth, timeout=5).json().get("front_door") or {}
                indexed = int(door.get("keys_in_index") or 0)
                if door.get("keys_indexed") and indexed >= stored:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(1)
        print(f"the server indexed {indexed:,} keys {time.perf_counter() - started:.0f} s after its start")
        latencies: list[float] = []
        refused: dict[int, int] = {}
        timeline: list[tuple[float, float]] = []  # (sent at, seconds to its answer)
        guard = threading.Lock()

        def send(count: int) -> None:
            with httpx.Client(base_url=base, timeout=120) as http:
                for number in range(count):
                    payload = {**corpus[number % len(corpus)], "event_id": uuid.uuid4().hex}
                    body = gzip.compress(_envelope(payload), 6)
                    t0 = time.perf_counter()
                    answer = http.post(path, content=body, headers=headers)
                    spent = time.perf_counter() - t0
                    with guard:
                        latencies.append(spent)
                        timeline.append((t0 - started, spent))
                        if answer.status_code != 200:  # timed too: a 503 after the door's wait is an answer
                            refused[answer.status_code] = refused.get(answer.status_code, 0) + 1

        started = time.perf_counter()
        with ThreadPoolExecutor(senders) as pool:
            list(pool.map(send, [envelopes // senders] * senders))
        elapsed = time.perf_counter() - started
        door = httpx.get(f"{base}/api/health", headers=auth, timeout=30).json()["front_door"]
        merges = (int(door["keys_in_index"]) - indexed) // MERGE_AT
        ms = sorted(x * 1000 for x in latencies)
        over = sum(1 for x in ms if x > 250)
        print(
            f"{len(ms):,} envelopes from {senders} senders in {elapsed:.0f} s ({len(ms) / elapsed:.0f}/s), "
            f"{merges} merges crossed: p50 {statistics.median(ms):.1f} ms, p99 "
            f"{ingest_bench._percentile(ms, 0.99):.1f} ms, p99.9 {ingest_bench._percentile(ms, 0.999):.1f} ms, "
            f"max {ms[-1]:.1f} ms, {over} over 250 ms; answers other than 200: {refused or 'none'}"
        )
        # A merge that stalled the door shows as a window whose answers all waited; one that did not leaves
        # the windows alike (load from elsewhere on the machine spreads over all of them).
        windows: dict[int, list[float]] = {}
        for at, spent in timeline:
            windows.setdefault(int(at // WINDOW_SECONDS), []).append(spent * 1000)
        p99s = sorted(ingest_bench._percentile(v, 0.99) for v in windows.values())
        worst = max(windows.values(), key=max)
        print(
            f"{len(windows)} windows of {WINDOW_SECONDS} s: p99 per window median {statistics.median(p99s):.0f} ms, "
            f"highest {p99s[-1]:.0f} ms; the window of the slowest answer: {len(worst)} answers, "
            f"median {statistics.median(worst):.0f} ms"
        )
    finally:
        server.terminate()
        server.wait(timeout=60)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", choices=["merge", "door"])
    parser.add_argument("--sizes", default="1000000,10000000", help="merge: stored keys, comma-separated")
    parser.add_argument("--rounds", type=int, default=3, help="merge: rounds per size")
    parser.add_argument("--stored", type=int, default=10_000_000, help="door: event ids stored before")
    parser.add_argument("--envelopes", type=int, default=80_000, help="door: envelopes sent")
    parser.add_argument("--senders", type=int, default=8, help="door: concurrent senders")
    args = parser.parse_args()
    if args.what == "merge":
        bench_merge([int(s) for s in args.sizes.split(",")], args.rounds)
    else:
        bench_door(args.stored, args.envelopes, args.senders)
    return 0


if __name__ == "__main__":
    sys.exit(main())
