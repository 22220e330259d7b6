"""Query budgets: ingest and the issue list beside the heaviest Explore question, in one run.

    .venv/bin/python bench/query_budgets.py                  # ~3 minutes: 100,000 stored events, 2 rounds
    .venv/bin/python bench/query_budgets.py --events 300000

A real `stacklens serve` (its own data directory, schedules off) is filled through `/api/ingest` with real
sentry-sdk events (bench/ingest.py's corpus, fresh ids), then each round measures twice — idle, and while two
clients loop the heaviest question Explore's API allows (errors over 90 days grouped by release, transaction
and level (the API allows three), with count, users and the issue count, 1,000 rows: it reads every stored
event):

- one-event gzip envelopes from 8 client threads (bench/peers.py's road): events/s accepted;
- the project's issue list (`GET /api/projects/{slug}/issues`, sequential): p50 and p95.

Goals (docs/architecture.md §5, query budgets): ingest keeps ≥ 80 % of its idle rate, the issue list's p95
stays ≤ 2×
idle."""

from __future__ import annotations

import argparse
import gzip
import importlib
import statistics
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
ingest_bench: Any = importlib.import_module("ingest")
peers: Any = importlib.import_module("peers")

HEAVY_QUERY = {
    "dataset": "errors",
    "range": "90d",
    "group_by": ["release", "transaction", "level"],  # the API's most (three)
    "aggregates": [{"fn": "count"}, {"fn": "unique_users"}],
    "limit": 1000,
}


def fill(stacklens: Any, events: int) -> None:
    """``events`` stored events through /api/ingest, in gzip batches of 1,000."""
    corpus = ingest_bench.build_corpus(2000, stacklens.project["app_key"])
    headers = {
        "Authorization": f"Bearer {stacklens.org['api_key']}",
        "Content-Encoding": "gzip",
        "Content-Type": "application/x-ndjson",
    }
    with httpx.Client(base_url=stacklens.base, timeout=300) as http:
        sent = 0
        while sent < events:
            lines = ingest_bench.fresh_ids(corpus)[: min(1000, events - sent)]
            answer = http.post(
                "/api/ingest",
                content=gzip.compress(b"\n".join(lines), 6),
                headers={**headers, "Idempotency-Key": uuid.uuid4().hex},
            )
            answer.raise_for_status()
            sent += len(lines)


def issue_list_latencies(stacklens: Any, requests: int) -> list[float]:
    seconds = []
    with httpx.Client(base_url=stacklens.base, timeout=60) as http:
        for _ in range(requests):
            started = time.perf_counter()
            answer = http.get(
                f"/api/projects/{stacklens.project['slug']}/issues",
                params={"range": "14d", "limit": 25},
                headers={"Authorization": f"Bearer {stacklens.org['api_key']}"},
            )
            answer.raise_for_status()
            seconds.append(time.perf_counter() - started)
    return seconds


class HeavyQuestions:
    """Two clients asking the heaviest Explore question in a loop (the organization's two query slots)."""

    def __init__(self, stacklens: Any) -> None:
        self.stacklens = stacklens
        self.stop = threading.Event()
        self.answered: list[float] = []
        self.refused = 0
        self.first_refusal = ""  # the status and text of the first refused question, printed with the round
        self.threads = [threading.Thread(target=self._loop, daemon=True) for _ in range(2)]

    def _loop(self) -> None:
        with httpx.Client(base_url=self.stacklens.base, timeout=120) as http:
            while not self.stop.is_set():
                started = time.perf_counter()
                answer = http.post(
                    "/api/explore/query",
                    json=HEAVY_QUERY,
                    headers={"Authorization": f"Bearer {self.stacklens.org['api_key']}"},
                )
                if answer.status_code == 200:
                    self.answered.append(time.perf_counter() - started)
                else:
                    self.refused += 1
                    if not self.first_refusal:
                        self.first_refusal = f"{answer.status_code} {answer.text[:200]}"
                    time.sleep(0.2)

    def __enter__(self) -> HeavyQuestions:
        for thread in self.threads:
            thread.start()
        time.sleep(1.0)  # both questions running before the measurement starts
        return self

    def __exit__(self, *_: object) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join()


def measure(stacklens: Any, corpus: list[dict[str, Any]], requests: int) -> dict[str, float]:
    ingest = stacklens.run(corpus, 8)
    latencies = issue_list_latencies(stacklens, requests)
    return {
        "ingest_s": ingest["accepted_s"],
        "list_p50_ms": statistics.median(latencies) * 1000,
        "list_p95_ms": ingest_bench._percentile(latencies, 0.95) * 1000,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=100_000, help="events stored before measuring")
    parser.add_argument("--envelopes", type=int, default=500, help="one-event envelopes per measurement")
    parser.add_argument("--requests", type=int, default=40, help="issue-list requests per measurement")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="stacklens-bench-budgets-"))
    stacklens = peers.StackLens(work)
    try:
        print(f"storing {args.events:,} events ...", flush=True)
        fill(stacklens, args.events)
        corpus = peers.error_corpus(args.envelopes)
        stacklens.run(corpus[:50], 8)  # warm-up
        print(
            f"{'round':>5} {'phase':>7} {'ingest ev/s':>12} {'list p50 ms':>12} {'list p95 ms':>12} {'explore s':>10}"
        )
        rounds = []
        for index in range(1, args.rounds + 1):
            idle = measure(stacklens, corpus, args.requests)
            print(
                f"{index:>5} {'idle':>7} {idle['ingest_s']:>12.1f} {idle['list_p50_ms']:>12.1f} {idle['list_p95_ms']:>12.1f}"
            )
            with HeavyQuestions(stacklens) as heavy:
                loaded = measure(stacklens, corpus, args.requests)
            took = statistics.median(heavy.answered) if heavy.answered else float("nan")
            print(
                f"{index:>5} {'explore':>7} {loaded['ingest_s']:>12.1f} {loaded['list_p50_ms']:>12.1f} "
                f"{loaded['list_p95_ms']:>12.1f} {took:>10.2f}  ({len(heavy.answered)} answered, {heavy.refused} refused)",
                flush=True,
            )
            if heavy.first_refusal:
                print(f"        first refusal: {heavy.first_refusal}", flush=True)
            if not heavy.answered:
                print("no heavy question was answered: this round measured nothing", file=sys.stderr)
                return 1
            rounds.append(
                (loaded["ingest_s"] / idle["ingest_s"], loaded["list_p95_ms"] / idle["list_p95_ms"])
            )
        kept = statistics.median(r[0] for r in rounds)
        slower = statistics.median(r[1] for r in rounds)
        print(
            f"ingest kept {kept:.0%} of its idle rate (goal ≥ 80 %); issue list p95 {slower:.2f}× idle (goal ≤ 2×)"
        )
    finally:
        stacklens.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
