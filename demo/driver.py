"""Drive the demo: backfill weeks of history once, then live traffic until stopped.

``python -m demo.driver --shop http://127.0.0.1:8001 --app-key … --worker-key … --storage-path …``

The driver is also the shop's order-mail worker: it records the worker's errors with stacklens_sdk under
the per-service key, so the demo shows one project with two services.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import sentry_sdk

import stacklens_sdk
from demo import backfill, feedback, live, monitors, traffic
from demo.clock import CONTEXT as CLOCK_CONTEXT
from demo.clock import apply_demo_clock, apply_demo_clock_to_log, encode_clock
from demo.delivery import RetryingTransport

ORIGIN = "https://shop.example"
APP_KEY_ENV = "STACKLENS_DEMO_APP_KEY"
WORKER_KEY_ENV = "STACKLENS_DEMO_WORKER_KEY"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Traffic for the StackLens demo shop")
    parser.add_argument("--shop", required=True, help="the shop's base URL")
    # The keys come from the environment (`stacklens up` puts them there): an argument is visible in `ps`.
    parser.add_argument(
        "--app-key",
        default=os.environ.get(APP_KEY_ENV),
        help=f"the project's primary app key (browser DSN); default ${APP_KEY_ENV}",
    )
    parser.add_argument(
        "--worker-key",
        default=os.environ.get(WORKER_KEY_ENV),
        help=f"the per-service app key of the mail worker; default ${WORKER_KEY_ENV}",
    )
    parser.add_argument("--storage-path", required=True)
    parser.add_argument("--environment", default="production")
    parser.add_argument("--backfill-days", type=int, default=35)
    parser.add_argument(
        "--rate-scale",
        type=float,
        default=1.0,
        help="multiply the demo's traffic rate (demo.rates), history and live alike (default 1)",
    )
    parser.add_argument("--backfill-marker", default=None, help="file that records a finished backfill")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--duration", type=float, default=0.0, help="stop after this many seconds (0: never)")
    args = parser.parse_args(argv)
    for option, value, variable in (
        ("--app-key", args.app_key, APP_KEY_ENV),
        ("--worker-key", args.worker_key, WORKER_KEY_ENV),
    ):
        if not value:
            parser.error(f"{option} is missing: set {variable} (or pass {option})")

    stacklens_sdk.init(
        app_key=args.worker_key,
        storage_path=args.storage_path,
        environment=args.environment,
        release=traffic.CURRENT_RELEASE.name,
        in_app_include=["demo"],
        server_name="shop-worker-1",
        before_send=apply_demo_clock,  # the history's mail errors carry the moment they stand for
        # Each mail job is a queue.process transaction continuing the checkout's trace (docs/traces.md).
        traces_sample_rate=1.0,
        before_send_transaction=apply_demo_clock,
        # The worker's log records (mail sent, mail failed) fill the Logs page under the service "worker".
        enable_logs=True,
        before_send_log=apply_demo_clock_to_log,
        # The customers' requests are not the worker's work: sending this process's trace headers made every
        # shop request continue one trace (issue #47). Without them the shop starts a trace per request.
        trace_propagation_targets=[],
    )
    rng = random.Random(args.seed)
    site = traffic.Site(
        stacklens_sdk.tunnel.browser_dsn(args.app_key),
        ORIGIN,
        args.environment,
        envelope_url=os.environ.get(feedback.ENVELOPE_URL_ENV, ""),  # the feedback widget's (demo.feedback)
    )
    stopping = False

    def _stop(_signum: int, _frame: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)

    transport = RetryingTransport()
    with httpx.Client(base_url=args.shop, timeout=30.0, transport=transport) as shop:
        _wait_for_shop(shop, lambda: stopping)
        marker = Path(args.backfill_marker) if args.backfill_marker else None
        if args.backfill_days > 0 and not (marker and marker.exists()) and not stopping:
            print(f"backfilling {args.backfill_days} days of history...", flush=True)
            report = backfill.backfill(
                shop, rng, site, args.backfill_days, scale=args.rate_scale, capture_at=_capture_at
            )
            report = replace(report, resent=transport.resent)
            stacklens_sdk.flush(timeout=10)  # the worker's history is in its log file before the marker
            for line in report.lines():
                print(line, flush=True)
            if marker:
                # The report first: `stacklens up` prints it once the marker appears. The marker is written
                # even when days were lost (said above): replaying again would double every day that landed.
                report.write(marker.parent)
                marker.write_text("done\n")
        deadline = time.monotonic() + args.duration if args.duration else None
        checkin_base = os.environ.get(monitors.CHECKIN_BASE_ENV)
        if checkin_base:  # the worker's batches check in as a cron job (demo/monitors.py)
            monitors.run_worker_checkins(
                checkin_base,
                args.worker_key,
                random.Random(args.seed + 1),
                stop=lambda: stopping or (deadline is not None and time.monotonic() > deadline),
                say=lambda line: print(line, flush=True),
            )
        print("live traffic running", flush=True)
        live.run_live(
            shop,
            rng,
            site,
            stacklens_sdk.capture_exception,
            stop=lambda: stopping or (deadline is not None and time.monotonic() > deadline),
            say=lambda line: print(line, flush=True),
            scale=args.rate_scale,
        )
    stacklens_sdk.flush(timeout=5)
    print("traffic stopped", flush=True)


def _capture_at(at: datetime, release: str) -> Callable[[BaseException], Any]:
    """The worker's capture for a moment of the history: the event is moved there (its own scope, so the
    backfill's threads do not share the context)."""

    def capture(exc: BaseException) -> None:
        with sentry_sdk.new_scope() as scope:
            scope.set_context(CLOCK_CONTEXT, {"value": encode_clock(at, release)})
            scope.capture_exception(exc)

    return capture


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
