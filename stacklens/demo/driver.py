"""Drive the demo: backfill weeks of history once, then live traffic until stopped.

``python -m stacklens.demo.driver --shop http://127.0.0.1:8001 --app-key … --worker-key … --storage-path …``

The driver is also the shop's order-mail worker: it records the worker's errors with stacklens_sdk under
the per-service key, so the demo shows one project with two services.
"""

from __future__ import annotations

import argparse
import random
import signal
import time
from pathlib import Path

import httpx

import stacklens_sdk
from stacklens.demo import traffic


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Traffic for the StackLens demo shop")
    parser.add_argument("--shop", required=True, help="the shop's base URL")
    parser.add_argument("--app-key", required=True, help="the project's primary app key (browser DSN)")
    parser.add_argument("--worker-key", required=True, help="the per-service app key of the mail worker")
    parser.add_argument("--storage-path", required=True)
    parser.add_argument("--environment", default="production")
    parser.add_argument("--backfill-days", type=int, default=35)
    parser.add_argument("--visits-per-day", type=int, default=30)
    parser.add_argument("--loads-per-day", type=int, default=24)
    parser.add_argument("--backfill-marker", default=None, help="file that records a finished backfill")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--pause", type=float, default=0.25, help="seconds between live visits")
    parser.add_argument("--duration", type=float, default=0.0, help="stop after this many seconds (0: never)")
    args = parser.parse_args(argv)

    stacklens_sdk.init(
        app_key=args.worker_key,
        storage_path=args.storage_path,
        environment=args.environment,
        release=traffic.CURRENT_RELEASE.name,
        in_app_include=["stacklens.demo"],
        server_name="shop-worker-1",
    )
    rng = random.Random(args.seed)
    dsn = stacklens_sdk.tunnel.browser_dsn(args.app_key)
    stopping = False

    def _stop(_signum: int, _frame: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)

    with httpx.Client(base_url=args.shop, timeout=30.0) as shop:
        _wait_for_shop(shop, lambda: stopping)
        marker = Path(args.backfill_marker) if args.backfill_marker else None
        if args.backfill_days > 0 and not (marker and marker.exists()) and not stopping:
            started = time.monotonic()
            print(f"backfilling {args.backfill_days} days of history...", flush=True)
            made = traffic.backfill(
                shop,
                rng,
                dsn,
                "https://shop.example",
                args.environment,
                args.backfill_days,
                args.visits_per_day,
                args.loads_per_day,
            )
            print(f"backfill done: {made} requests in {time.monotonic() - started:.0f}s", flush=True)
            if marker:
                marker.parent.mkdir(parents=True, exist_ok=True)
                marker.write_text("done\n")
        deadline = time.monotonic() + args.duration if args.duration else None
        print("live traffic running", flush=True)
        traffic.run_live(
            shop,
            rng,
            dsn,
            "https://shop.example",
            args.environment,
            stacklens_sdk.capture_exception,
            stop=lambda: stopping or (deadline is not None and time.monotonic() > deadline),
            pause=args.pause,
        )
    stacklens_sdk.flush(timeout=5)
    print("traffic stopped", flush=True)


def _wait_for_shop(shop: httpx.Client, stopping: object) -> None:
    for _ in range(120):
        if callable(stopping) and stopping():
            return
        try:
            if shop.get("/api/health").status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise SystemExit(f"the shop at {shop.base_url} did not answer within 60 s")


if __name__ == "__main__":
    main()
