"""The Sentry front door against a real peer: one event per gzip envelope, StackLens and Bugsink in one run.

    .venv/bin/python bench/peers.py                          # 1,000 events, 8 clients, 2 alternating rounds
    .venv/bin/python bench/peers.py --concurrency 64 --no-peer --events 4000
    .venv/bin/python bench/peers.py --no-peer                # StackLens alone (the peer needs its own venv)
    .venv/bin/python bench/peers.py --entrances envelope,ingest:1,ingest:10,otlp:50   # every entrance

The same events also go, with ``--entrances``, through `/api/ingest` in batches of N lines (``ingest:N``,
an Idempotency-Key each, as a shipper sends) and through OTLP/HTTP exports of about N spans made by
OpenTelemetry's encoder (``otlp:N``, rates in spans/s); each entrance's end-to-end rate is compared with the
peer's in its round.

The corpus is real sentry-sdk error events (bench/ingest.py's stacks, errors only: the peer stores errors).
Each round posts the same events with fresh ids as gzip envelopes of one event each to
`/api/<project id>/envelope/` with the DSN key in `X-Sentry-Auth`, from `--concurrency` client threads, one
connection each, to a real `stacklens serve` (its own data directory, schedules off); then runs the peer
(Bugsink, `../shared/peers/bugsink_ingest.py` with its venv, see its README) on the same events. Rounds
alternate the two systems, so a noisy minute skews one round, not the ratio.

Per system: events/s accepted; events/s accepted *and* visible (StackLens: the project's issue list, read
through the API, adds up to every accepted event; Bugsink: every event digested into an issue); CPU per event
(the server's process tree; for Bugsink its web and digest processes); p50 / p99 per envelope; answers ≥ 500.
The ratio printed is StackLens's end-to-end rate over Bugsink's in the same round.

``BENCH_SHOW_THREADS=1`` also prints, per round, the server's CPU an event by thread name (the embedded engine
names the threads it runs a statement in: the front door's drain thread shows as ``Unknown``, its merges as
``MergeMutate``; the event loop is ``main thread``).
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
from http.client import HTTPConnection
from pathlib import Path
from typing import Any

import httpx
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))
ingest_bench: Any = importlib.import_module("ingest")

PEER_TOOL = ingest_bench.ROOT.parent / "shared" / "peers" / "bugsink_ingest.py"


def error_corpus(count: int) -> list[dict[str, Any]]:
    """``count`` sentry-sdk error event payloads (the transactions of bench/ingest.py's corpus left out)."""
    lines = ingest_bench.build_corpus(count * 2, "unused")
    errors = [line["payload"] for line in lines if line["type"] == "event"]
    while len(errors) < count:
        errors += errors
    return errors[:count]


def envelope(payload: dict[str, Any]) -> bytes:
    body = json.dumps(payload).encode()
    header = json.dumps({"event_id": payload["event_id"], "sent_at": payload.get("timestamp")}).encode()
    item = json.dumps({"type": "event", "length": len(body)}).encode()
    return b"\n".join([header, item, body]) + b"\n"


Request = tuple[dict[str, str], bytes, int]  # headers, body, events (or spans) it carries


def fresh(corpus: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{**payload, "event_id": uuid.uuid4().hex} for payload in corpus]


class StackLens:
    """A `stacklens serve` of its own data directory, an organization, a project and its DSN key."""

    def __init__(self, work: Path) -> None:
        port = ingest_bench._free_port()
        self.env = {
            **os.environ,
            "STACKLENS_DATA_DIR": str(work / "server"),
            "STACKLENS_RUN_SCHEDULES": "false",
            "STACKLENS_PORT": str(port),
            "PYTHONPATH": str(ingest_bench.ROOT),
            # Spike protection lifted as the quotas are below: it holds a project to 10,000 events a minute
            # at least, and a run of more than about ten rounds of 1,000 envelopes without the peer's pauses
            # between them would meet it (429s, counted as refused, not accepted).
            "STACKLENS_SPIKE_FLOOR_PER_MINUTE": "100000000",
        }
        for name in ("STACKLENS_WAREHOUSE_URL", "STACKLENS_DATABASE_URL", "STACKLENS_WAREHOUSE_DATABASE"):
            self.env.pop(name, None)
        self.org = ingest_bench._cli(
            self.env,
            *("admin", "create-org", "--name", "Bench", "--owner-email", "bench@example.com"),
            *("--password", "bench-password-1", "--json"),
        )
        self.project = ingest_bench._cli(
            self.env, "admin", "create-project", "--org", "Bench", "--name", "Shop", "--json"
        )
        subprocess.run(
            [
                *ingest_bench.STACKLENS,
                "admin",
                "set-quota",
                "--org",
                "Bench",
                "--events-per-minute",
                "100000000",
                # The API key's request rate too: /api/ingest batches of one line, then the issue list read
                # every 20 ms until it adds up, would meet it (the peer tool lifts Bugsink's quotas as well).
                "--requests-per-second",
                "100000",
            ],
            env=self.env,
            cwd=ingest_bench.ROOT,
            check=True,
            capture_output=True,
        )
        self.server = subprocess.Popen(
            [*ingest_bench.STACKLENS, "serve", "--host", "127.0.0.1", "--port", str(port)],
            env=self.env,
            cwd=ingest_bench.ROOT,
            stdout=subprocess.DEVNULL,
            stderr=(work / "server.log").open("wb"),
        )
        self.port = port
        self.base = f"http://127.0.0.1:{port}"
        for _ in range(600):
            try:
                if httpx.get(f"{self.base}/api/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        else:
            raise SystemExit("stacklens serve did not answer within 120 s")

    def visible(self, http: httpx.Client) -> int:
        """Events the project's issue list counts (every status, the last hour)."""
        total, cursor = 0, ""
        while True:
            answer = http.get(
                f"/api/projects/{self.project['slug']}/issues",
                params={"status": "all", "range": "1h", "limit": 100, "cursor": cursor},
                headers={"Authorization": f"Bearer {self.org['api_key']}"},
            )
            answer.raise_for_status()
            page = answer.json()
            total += sum(issue["events"] for issue in page["issues"])
            cursor = page.get("next_cursor") or ""
            if not cursor:
                return total

    def issues(self, http: httpx.Client) -> int:
        answer = http.get(
            f"/api/projects/{self.project['slug']}/issues",
            params={"status": "all", "range": "1h", "limit": 100},
            headers={"Authorization": f"Bearer {self.org['api_key']}"},
        )
        return len(answer.json()["issues"])

    def requests(self, entrance: str, corpus: list[dict[str, Any]]) -> tuple[str, list[Request]]:
        """The path and (headers, body, events) of every request of ``entrance`` carrying ``corpus`` afresh:
        ``envelope`` (one event a gzip envelope), ``ingest:N`` (gzip NDJSON batches of N SDK lines with an
        Idempotency-Key, as a shipper sends), ``otlp:N`` (gzip protobuf exports of about N spans; the corpus
        is only counted: the spans are OpenTelemetry's own)."""
        kind, _, size = entrance.partition(":")
        app_key = str(self.project["app_key"])
        if kind == "envelope":
            headers = {
                "Content-Encoding": "gzip",
                "Content-Type": "application/x-sentry-envelope",
                "X-Sentry-Auth": f"Sentry sentry_version=7, sentry_key={app_key}, sentry_client=bench",
            }
            bodies = [gzip.compress(envelope(payload), 6) for payload in fresh(corpus)]
            return f"/api/{self.project['project_id']}/envelope/", [(headers, b, 1) for b in bodies]
        if kind == "ingest":
            per = int(size)
            now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
            lines = [
                json.dumps({"v": 1, "type": "event", "ts": now, "app_key": app_key, "payload": p}).encode()
                for p in fresh(corpus)
            ]
            base = {
                "Authorization": f"Bearer {self.org['api_key']}",
                "Content-Encoding": "gzip",
                "Content-Type": "application/x-ndjson",
            }
            return "/api/ingest", [
                (
                    {**base, "Idempotency-Key": uuid.uuid4().hex},
                    gzip.compress(b"\n".join(lines[i : i + per]) + b"\n", 6),
                    len(lines[i : i + per]),
                )
                for i in range(0, len(lines), per)
            ]
        if kind == "otlp":
            otlp_bench: Any = importlib.import_module("otlp")
            headers = {"Content-Type": "application/x-protobuf", "Content-Encoding": "gzip"}
            headers["X-Stacklens-App-Key"] = app_key
            exports = otlp_bench.build_requests(len(corpus))
            exported: list[Request] = []
            group: list[Any] = []
            for export in otlp_bench._fresh(exports, 1):
                group.append(export)
                spans = sum(len(ss.spans) for e in group for rs in e.resource_spans for ss in rs.scope_spans)
                if spans >= int(size):
                    merged = group[0]
                    for more in group[1:]:
                        merged.MergeFrom(more)
                    exported.append((headers, gzip.compress(merged.SerializeToString(), 6), spans))
                    group = []
            return f"/api/{self.project['project_id']}/otlp/v1/traces", exported
        raise SystemExit(f"unknown entrance {entrance!r}: envelope, ingest:N or otlp:N")

    def landed(self, http: httpx.Client) -> bool:
        """The front door holds nothing (every answered row is in the warehouse)."""
        health = http.get("/api/health", headers={"Authorization": f"Bearer {self.org['api_key']}"})
        return not (health.json().get("front_door") or {}).get("rows_waiting")

    def run(
        self, corpus: list[dict[str, Any]], concurrency: int, entrance: str = "envelope"
    ) -> dict[str, float]:
        path, requests = self.requests(entrance, corpus)
        errors = not entrance.startswith("otlp")
        server = psutil.Process(self.server.pid)
        latencies: list[float] = []
        failures: list[int] = []
        accepted = 0
        guard = threading.Lock()

        def send(chunk: list[Request]) -> None:
            # The peer tool's client (http.client, one keep-alive connection per thread), so both systems are
            # sent to alike and the client takes the same share of the machine's cores.
            nonlocal accepted
            connection = HTTPConnection("127.0.0.1", self.port, timeout=120)
            try:
                for headers, body, events in chunk:
                    t0 = time.perf_counter()
                    connection.request("POST", path, body=body, headers=headers)
                    answer = connection.getresponse()
                    answer.read()
                    spent = time.perf_counter() - t0
                    if answer.will_close:
                        connection.close()
                    with guard:
                        latencies.append(spent)
                        if answer.status == 200:
                            accepted += events
                        else:
                            failures.append(answer.status)
            finally:
                connection.close()

        with httpx.Client(base_url=self.base, timeout=60) as http:
            before = self.visible(http)
            cpu_started = ingest_bench._cpu_seconds(server)
            threads_started = _thread_cpu(server)
            started = time.perf_counter()
            with ThreadPoolExecutor(concurrency) as pool:
                list(pool.map(send, [requests[i::concurrency] for i in range(concurrency)]))
            sent_s = time.perf_counter() - started
            while (self.visible(http) < before + accepted) if errors else not self.landed(http):
                if time.perf_counter() - started > 600:
                    raise SystemExit("events accepted but not visible after 600 s")
                time.sleep(0.02)
            visible_s = time.perf_counter() - started
            cpu = ingest_bench._cpu_seconds(server) - cpu_started
            threads_spent = _thread_cpu(server)
            issues = self.issues(http)
            health = http.get("/api/health", headers={"Authorization": f"Bearer {self.org['api_key']}"})
            self.queue = health.json().get("front_door") or {}
        if os.environ.get("BENCH_SHOW_THREADS"):
            names: dict[str, float] = {}
            for tid, (name, seconds) in threads_spent.items():
                names[name] = names.get(name, 0.0) + seconds - threads_started.get(tid, (name, 0.0))[1]
            top = sorted(names.items(), key=lambda kv: -kv[1])[:12]
            print(
                "  ms an event by thread: "
                + ", ".join(f"{n} {s / max(accepted, 1) * 1000:.2f}" for n, s in top)
            )
        if os.environ.get("BENCH_SHOW_QUEUE"):
            print(f"  front door after {entrance}: {self.queue}", flush=True)
        return {
            "accepted_s": accepted / sent_s,
            "visible_s": accepted / visible_s,
            "cpu_ms": cpu / max(accepted, 1) * 1000,
            "p50_ms": statistics.median(latencies) * 1000,
            "p99_ms": ingest_bench._percentile(latencies, 0.99) * 1000,
            "errors_5xx": float(sum(1 for status in failures if status >= 500)),
            "refused": float(len(failures)),
            "issues": float(issues),
        }

    def stop(self) -> None:
        self.server.terminate()
        self.server.wait(timeout=60)


def _thread_cpu(process: psutil.Process) -> dict[int, tuple[str, float]]:
    """CPU seconds of each thread of the server and its children, by thread id, with the thread's name."""
    spent: dict[int, tuple[str, float]] = {}
    for each in [process, *process.children(recursive=True)]:
        try:
            threads = each.threads()
        except psutil.NoSuchProcess:
            continue
        for thread in threads:
            try:
                name = Path(f"/proc/{each.pid}/task/{thread.id}/comm").read_text().strip()
            except OSError:
                continue
            if thread.id == each.pid:
                name = "main thread" if each.pid == process.pid else "worker main thread"
            spent[thread.id] = (name, thread.user_time + thread.system_time)
    return spent


def run_peer(corpus_file: Path, events: int, concurrency: int, venv: str, work: Path) -> dict[str, float]:
    """One run of the peer's own tool on the same events; its JSON figures, named as ours."""
    out = work / "peer.json"
    done = subprocess.run(
        [
            f"{venv}/bin/python",
            str(PEER_TOOL),
            *("--corpus", str(corpus_file), "--n", str(events), "--runs", "1"),
            *("--concurrency", str(concurrency), "--port", str(ingest_bench._free_port())),
            *("--venv", venv, "--workdir", str(work / "bugsink"), "--json-out", str(out)),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"the peer's tool failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    figures = json.loads(out.read_text())
    run = figures["runs"][0] if "runs" in figures else figures
    return _peer_figures(run)


def _peer_figures(run: dict[str, Any]) -> dict[str, float]:
    """The peer tool's run (its own names) as ours: accepted and end-to-end rates, CPU of its web and digest
    processes per accepted event, answers other than 200."""
    accepted = float(run.get("accepted_200") or 0)
    cpu = sum(float(v) for v in (run.get("cpu_s_total") or {}).values())
    statuses = run.get("status_counts") or {}
    return {
        "accepted_s": float(run.get("ingest_events_per_s") or float("nan")),
        "visible_s": float(run.get("ingest_and_digest_events_per_s") or float("nan")),
        "cpu_ms": cpu / accepted * 1000 if accepted else float("nan"),
        "p50_ms": float("nan"),  # the peer's tool does not time single requests
        "p99_ms": float("nan"),
        "errors_5xx": float(sum(n for status, n in statuses.items() if str(status).startswith("5"))),
        "refused": float(sum(n for status, n in statuses.items() if str(status) != "200")),
        "issues": float(run.get("issues") or float("nan")),
    }


COLUMNS = ("accepted_s", "visible_s", "cpu_ms", "p50_ms", "p99_ms", "errors_5xx", "refused", "issues")


def _row(system: str, label: str, figures: dict[str, float]) -> str:
    cells = " ".join(f"{figures.get(c, float('nan')):>11.1f}" for c in COLUMNS)
    return f"{system:>9} {label:>5} {cells}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--no-peer", action="store_true", help="StackLens alone")
    parser.add_argument("--peer-venv", default="/tmp/bugsink-venv")
    parser.add_argument(
        "--entrances",
        default="envelope",
        help="StackLens's entrances to send the events through, comma-separated: envelope, ingest:N (batches "
        "of N lines), otlp:N (exports of about N spans; rates are spans/s); each compared with the peer",
    )
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="stacklens-bench-peers-"))
    print(f"building {args.events} sentry-sdk error events ...", flush=True)
    corpus = error_corpus(args.events)
    corpus_file = work / "events.ndjson"
    corpus_file.write_text("".join(json.dumps(p) + "\n" for p in corpus))
    stacklens = StackLens(work)
    print(f"{'system':>9} {'round':>5} " + " ".join(f"{c:>11}" for c in COLUMNS), flush=True)
    ours: list[tuple[str, dict[str, float]]] = []
    theirs: list[dict[str, float]] = []
    try:
        entrances = args.entrances.split(",")
        for entrance in entrances:  # warm-up, as the peer's tool does
            stacklens.run(corpus[: min(50, len(corpus))], args.concurrency, entrance)
        for index in range(1, args.rounds + 1):
            for entrance in entrances:
                ours.append((entrance, stacklens.run(corpus, args.concurrency, entrance)))
                print(_row(_short(entrance), str(index), ours[-1][1]), flush=True)
            if not args.no_peer:
                theirs.append(run_peer(corpus_file, args.events, args.concurrency, args.peer_venv, work))
                print(_row("bugsink", str(index), theirs[-1]), flush=True)
                for entrance, ran in ours[-len(entrances) :]:
                    ratio = ran["visible_s"] / theirs[-1]["visible_s"]
                    print(f"{'ratio':>9} {index:>5} {ratio:>23.2f}  ({entrance} / Bugsink)")
    finally:
        stacklens.stop()
    for entrance in entrances:
        runs = [figures for name, figures in ours if name == entrance]
        print(_row(_short(entrance), "med", {c: statistics.median(r[c] for r in runs) for c in COLUMNS}))
        if theirs:
            ratios = [r["visible_s"] / t["visible_s"] for r, t in zip(runs, theirs, strict=True)]
            print(f"end-to-end ratio {entrance} / Bugsink per round: {', '.join(f'{r:.1f}' for r in ratios)}")
    if theirs:
        print(_row("bugsink", "med", {c: statistics.median(r[c] for r in theirs) for c in COLUMNS}))
    return 0


def _short(entrance: str) -> str:
    return "stacklens" if entrance == "envelope" else entrance[:9]


if __name__ == "__main__":
    sys.exit(main())
