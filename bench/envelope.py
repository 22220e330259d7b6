"""Sentry-protocol ingest against `/api/ingest`: the same corpus, the same real `stacklens serve`.

    .venv/bin/python bench/envelope.py                  # ~1 minute: 1,000 events, batches of 1 and 100
    .venv/bin/python bench/envelope.py --events 10000   # a longer run

The corpus is bench/ingest.py's (real sentry-sdk errors and transactions). Each round posts it twice with new
event ids: as gzip NDJSON batches of `--per-request` lines to `/api/ingest` (Bearer API key) and as gzip
envelopes of one event each to `/api/<project id>/envelope/` (the DSN key: an envelope carries one event, as
Sentry SDKs send it and as the service, like Relay, requires), from four concurrent clients (many SDKs send at
once). It prints events/s of both and their ratio (goal: the envelope path within 10 % of `/api/ingest` at one
event per request, i.e. ratio ≥ 0.9); medians over the rounds.
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
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx

# bench/ingest.py, beside this file (bench/ is a folder of scripts, not a package).
sys.path.insert(0, str(Path(__file__).resolve().parent))
ingest_bench: Any = importlib.import_module("ingest")

CLIENTS = 4


def _envelope(payloads: list[dict[str, Any]]) -> bytes:
    parts = [json.dumps({"event_id": payloads[0]["event_id"], "sent_at": "2026-11-22T00:00:00Z"}).encode()]
    for payload in payloads:
        body = json.dumps(payload).encode()
        kind = "transaction" if payload.get("type") == "transaction" else "event"
        parts += [json.dumps({"type": kind, "length": len(body)}).encode(), body]
    return b"\n".join(parts) + b"\n"


def _post_all(base: str, requests: list[tuple[str, dict[str, str], bytes]]) -> float:
    """Seconds to post every request from CLIENTS threads; any answer but 200 stops the bench."""

    def send(chunk: list[tuple[str, dict[str, str], bytes]]) -> None:
        with httpx.Client(base_url=base, timeout=120) as http:
            for path, headers, body in chunk:
                answer = http.post(path, content=body, headers=headers)
                if answer.status_code != 200:
                    raise SystemExit(f"{path} answered {answer.status_code}: {answer.text[:300]}")

    chunks = [requests[i::CLIENTS] for i in range(CLIENTS)]
    started = time.perf_counter()
    with ThreadPoolExecutor(CLIENTS) as pool:
        list(pool.map(send, chunks))
    return time.perf_counter() - started


def run(
    base: str, org: dict[str, Any], project: dict[str, Any], corpus: list[dict[str, Any]], per_request: int
) -> dict[str, float]:
    lines = ingest_bench.fresh_ids(corpus)
    batches = [b"\n".join(lines[i : i + per_request]) + b"\n" for i in range(0, len(lines), per_request)]
    ingest_headers = {
        "Authorization": f"Bearer {org['api_key']}",
        "Content-Encoding": "gzip",
        "Content-Type": "application/x-ndjson",
    }
    api = [
        ("/api/ingest", {**ingest_headers, "Idempotency-Key": uuid.uuid4().hex}, gzip.compress(b, 6))
        for b in batches
    ]
    api_s = _post_all(base, api)

    payloads = [json.loads(line)["payload"] for line in ingest_bench.fresh_ids(corpus)]
    path = f"/api/{project['project_id']}/envelope/?sentry_key={project['app_key']}"
    headers = {"Content-Encoding": "gzip", "Content-Type": "application/x-sentry-envelope"}
    envelopes = [(path, headers, gzip.compress(_envelope([payload]), 6)) for payload in payloads]
    envelope_s = _post_all(base, envelopes)
    return {"api": len(lines) / api_s, "envelope": len(payloads) / envelope_s, "ratio": api_s / envelope_s}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=1000, help="events per run (default 1000)")
    parser.add_argument(
        "--per-request", default="1,100", help="events per /api/ingest request, comma-separated"
    )
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="stacklens-bench-envelope-"))
    port = ingest_bench._free_port()
    env = {
        **os.environ,
        "STACKLENS_DATA_DIR": str(work / "server"),
        "STACKLENS_RUN_SCHEDULES": "false",
        "STACKLENS_PORT": str(port),
        "PYTHONPATH": str(ingest_bench.ROOT),
    }
    for name in ("STACKLENS_WAREHOUSE_URL", "STACKLENS_DATABASE_URL", "STACKLENS_WAREHOUSE_DATABASE"):
        env.pop(name, None)
    org = ingest_bench._cli(
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
    project = ingest_bench._cli(env, "admin", "create-project", "--org", "Bench", "--name", "Shop", "--json")
    subprocess.run(
        [*ingest_bench.STACKLENS, "admin", "set-quota", "--org", "Bench", "--events-per-minute", "100000000"],
        env=env,
        cwd=ingest_bench.ROOT,
        check=True,
        capture_output=True,
    )
    corpus = ingest_bench.build_corpus(args.events, project["app_key"])
    server = subprocess.Popen(
        [*ingest_bench.STACKLENS, "serve", "--host", "127.0.0.1", "--port", str(port)],
        env=env,
        cwd=ingest_bench.ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                if httpx.get(f"{base}/api/health", timeout=1).status_code in (200, 503):
                    break
            except httpx.HTTPError:
                time.sleep(0.2)
        print(f"{'per request':>11} {'round':>5} {'ingest ev/s':>12} {'envelope ev/s':>14} {'ratio':>6}")
        for size in [int(s) for s in args.per_request.split(",")]:
            rounds = []
            for index in range(1, args.rounds + 1):
                figures = run(base, org, project, corpus, size)
                rounds.append(figures)
                print(
                    f"{size:>11} {index:>5} {figures['api']:>12.0f} {figures['envelope']:>14.0f} {figures['ratio']:>6.2f}"
                )
            med = {k: statistics.median(r[k] for r in rounds) for k in rounds[0]}
            print(
                f"{size:>11} {'med':>5} {med['api']:>12.0f} {med['envelope']:>14.0f} {med['ratio']:>6.2f}",
                flush=True,
            )
    finally:
        server.terminate()
        server.wait(timeout=30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
