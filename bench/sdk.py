"""SDK write throughput and capture overhead.

    .venv/bin/python bench/sdk.py                 # short run (2,000 events per case)
    .venv/bin/python bench/sdk.py --events 20000  # fuller run

Prints events/s written to one log file by 1 thread, 8 threads and 4 processes, then the cost of one
``capture_exception`` through stacklens_sdk against sentry-sdk with a transport that drops everything (its
default HTTP transport disabled). Every run re-reads the file and fails if a line is torn or interleaved.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

KEY = "stacklens_app_" + "Bench0" * 4


def _init(storage: str) -> None:
    import stacklens_sdk

    stacklens_sdk.init(app_key=KEY, storage_path=storage, default_integrations=False)


def _emit(n: int, tag: str) -> None:
    import stacklens_sdk

    for i in range(n):
        stacklens_sdk.capture_message(f"{tag} {i}")


def _process_worker(storage: str, n: int, tag: str) -> None:
    _init(storage)
    _emit(n, tag)
    import stacklens_sdk

    stacklens_sdk.flush()


def verify(storage: Path, expected: int) -> None:
    """Every line parses and carries its own message: nothing torn, nothing interleaved."""
    seen = set()
    for path in storage.glob("stacklens-*.log"):
        raw = path.read_bytes()
        if raw and not raw.endswith(b"\n"):
            raise SystemExit(f"{path} ends mid-line")
        for line in raw.splitlines():
            obj = json.loads(line)  # raises on a torn or interleaved line
            seen.add(obj["payload"]["message"])
    if len(seen) != expected:
        raise SystemExit(f"expected {expected} distinct events, found {len(seen)}")


def bench_threads(n: int, threads: int) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        _init(tmp)
        per = n // threads
        workers = [threading.Thread(target=_emit, args=(per, f"t{t}")) for t in range(threads)]
        start = time.perf_counter()
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        elapsed = time.perf_counter() - start
        verify(Path(tmp), per * threads)
        return per * threads / elapsed


def bench_processes(n: int, processes: int) -> float:
    ctx = multiprocessing.get_context("spawn")
    with tempfile.TemporaryDirectory() as tmp:
        per = n // processes
        procs = [ctx.Process(target=_process_worker, args=(tmp, per, f"p{p}")) for p in range(processes)]
        start = time.perf_counter()
        for p in procs:
            p.start()
        for p in procs:
            p.join()
        elapsed = time.perf_counter() - start  # includes interpreter start-up: a lower bound on the rate
        verify(Path(tmp), per * processes)
        return per * processes / elapsed


OVERHEAD = """
import sys, time, tempfile
import sentry_sdk
from sentry_sdk.transport import Transport
mode, n = sys.argv[1], int(sys.argv[2])
class Drop(Transport):
    def capture_envelope(self, envelope):
        pass
tmp = tempfile.mkdtemp()
if mode == "stacklens":
    import stacklens_sdk
    stacklens_sdk.init(app_key=sys.argv[3], storage_path=tmp, default_integrations=False)
else:
    sentry_sdk.init(transport=Drop(), default_integrations=False)
def fail(depth):
    local_value = depth * 2
    if depth == 0:
        raise ValueError("benchmark failure %d" % local_value)
    fail(depth - 1)
samples = []
for i in range(n):
    try:
        fail(5)
    except ValueError as exc:
        t = time.perf_counter()
        sentry_sdk.capture_exception(exc)
        samples.append(time.perf_counter() - t)
samples.sort()
print(samples[len(samples) // 2] * 1e6, samples[int(len(samples) * 0.95)] * 1e6)
"""


def bench_overhead(n: int) -> dict[str, tuple[float, float]]:
    out = {}
    for mode in ("sentry-drop", "stacklens"):
        proc = subprocess.run(
            [sys.executable, "-c", OVERHEAD, mode, str(n), KEY], capture_output=True, text=True, check=True
        )
        p50, p95 = map(float, proc.stdout.split())
        out[mode] = (p50, p95)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--events", type=int, default=2000, help="events per case (default 2000)")
    parser.add_argument("--repeat", type=int, default=1, help="runs per case; the median is printed")
    args = parser.parse_args()
    n = args.events
    cases = {
        "1 thread": lambda: bench_threads(n, 1),
        "8 threads": lambda: bench_threads(n, 8),
        "4 processes": lambda: bench_processes(n, 4),
    }
    print(f"events per case: {n}")
    for name, run in cases.items():
        rate = statistics.median(run() for _ in range(args.repeat))
        print(f"{name:>12}: {rate:10,.0f} events/s  (all lines whole, none interleaved)")
    overhead = bench_overhead(max(200, n // 4))
    base, ours = overhead["sentry-drop"], overhead["stacklens"]
    print(f"capture_exception, sentry-sdk dropping transport: p50 {base[0]:7.1f} us  p95 {base[1]:7.1f} us")
    print(f"capture_exception, stacklens_sdk file transport:  p50 {ours[0]:7.1f} us  p95 {ours[1]:7.1f} us")
    print(f"overhead of writing the line: p50 {ours[0] - base[0]:+.1f} us")


if __name__ == "__main__":
    main()
