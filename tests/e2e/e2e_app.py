"""The application of the end-to-end test: instrumented with ``stacklens_sdk`` exactly as a user would.

Run as ``python -m e2e_app --app-key … --browser-key … --storage-path … --pause-file … --resume-file …``.
It serves a small WSGI application (sentry-sdk's WSGI middleware and the SDK's browser tunnel) on a loopback
port and drives it, raises errors from :data:`SITES` with varied callers and messages, records transactions,
and posts ``@sentry/browser``-shaped envelopes through the tunnel. Halfway it writes ``--pause-file`` and
waits for ``--resume-file``, so the test can stop the shipper while the log still grows.

:data:`SITES` is the contract with the test: each error site becomes one issue with exactly that many events.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

import httpx
from e2e_contract import SECRET_PASSWORD, SECRET_TOKEN, SITES
from e2e_shop import checkout_from_batch, checkout_from_web, lookup_sku, parse_quantity, shop
from sentry_sdk.integrations.wsgi import SentryWsgiMiddleware

import stacklens_sdk
from stacklens_sdk.tunnel import TunnelMiddleware, browser_dsn

PACE_SECONDS = 0.06


class QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # `format`: wsgiref's signature
        pass


def serve(app: Callable[..., Any]) -> tuple[WSGIServer, str]:
    server = make_server("127.0.0.1", 0, app, handler_class=QuietHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_port}"


# ---- browser envelopes ----------------------------------------------------------------------------------
def envelope(dsn: str, item: dict[str, Any]) -> bytes:
    header = {"event_id": item["event_id"], "dsn": dsn, "sent_at": _iso(time.time())}
    lines = [json.dumps(header), json.dumps({"type": item["type"]}), json.dumps(item)]
    return ("\n".join(lines) + "\n").encode()


def _iso(epoch: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(epoch)) + f".{int(epoch % 1 * 1000):03d}Z"


BROWSER_REQUEST = {
    "url": "https://shop.example/cart",
    "headers": {
        "User-Agent": "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0.0.0 Safari/537.36"
    },
}


def browser_error(n: int) -> dict[str, Any]:
    frames = [
        {
            "filename": "https://shop.example/static/app.3f9a1c2b.js",
            "function": "onClick",
            "lineno": 10,
            "colno": 3,
            "in_app": True,
        },
        {
            "filename": "https://shop.example/static/app.3f9a1c2b.js",
            "function": "renderCart",
            "lineno": 88,
            "colno": 17,
            "in_app": True,
        },
    ]
    return {
        "type": "event",
        "event_id": uuid.uuid4().hex,
        "platform": "javascript",
        "level": "error",
        "timestamp": time.time(),
        "release": "e2e-web@1.0.0",
        "environment": "e2e",
        "sdk": {"name": "sentry.javascript.browser", "version": "10.27.0"},
        "request": BROWSER_REQUEST,
        "exception": {
            "values": [
                {
                    "type": "TypeError",
                    "value": f"Cannot read properties of undefined (reading 'items') in cart {n}",
                    "mechanism": {"type": "onerror", "handled": False},
                    "stacktrace": {"frames": frames},
                }
            ]
        },
    }


def browser_pageload() -> dict[str, Any]:
    start = time.time() - 2.0
    trace, root = uuid.uuid4().hex, uuid.uuid4().hex[:16]
    return {
        "type": "transaction",
        "event_id": uuid.uuid4().hex,
        "platform": "javascript",
        "transaction": "/cart",
        "transaction_info": {"source": "url"},
        "start_timestamp": start,
        "timestamp": start + 1.4,
        "release": "e2e-web@1.0.0",
        "environment": "e2e",
        "sdk": {"name": "sentry.javascript.browser", "version": "10.27.0"},
        "contexts": {"trace": {"op": "pageload", "trace_id": trace, "span_id": root, "status": "ok"}},
        "request": BROWSER_REQUEST,
        "measurements": {
            "ttfb": {"value": 95.0, "unit": "millisecond"},
            "lcp": {"value": 1100.0, "unit": "millisecond"},
        },
        "spans": [
            {
                "span_id": uuid.uuid4().hex[:16],
                "parent_span_id": root,
                "trace_id": trace,
                "op": "resource.script",
                "description": "https://shop.example/static/app.3f9a1c2b.js",
                "start_timestamp": start + 0.1,
                "timestamp": start + 0.3,
                "data": {
                    "http.response_content_length": 41000,
                    "resource.render_blocking_status": "blocking",
                },
            },
        ],
    }


# ---- the run --------------------------------------------------------------------------------------------
def actions(base: str, dsn: str, client: httpx.Client) -> list[Callable[[], None]]:
    """Every step of the run, interleaved the way real traffic mixes them."""

    def captured(call: Callable[[], Any], tags: dict[str, str] | None = None) -> Callable[[], None]:
        def step() -> None:
            for key, value in (tags or {}).items():
                stacklens_sdk.set_tag(key, value)
            try:
                call()
            except Exception as exc:  # noqa: BLE001 - every exception goes to the SDK: that is the point
                stacklens_sdk.capture_exception(exc)

        return step

    def checkout(n: int) -> Callable[[], None]:
        def step() -> None:
            body = {"cart": 900 + n, "password": SECRET_PASSWORD}
            answer = client.post(f"{base}/checkout", json=body, headers={"Authorization": SECRET_TOKEN})
            assert answer.status_code == 500, answer.status_code

        return step

    def order(n: int) -> Callable[[], None]:
        return lambda: client.get(f"{base}/orders/{n}").raise_for_status()

    def tunnel(make: Callable[[], dict[str, Any]]) -> Callable[[], None]:
        # Built when sent, so the payload's timestamp is the moment of the step.
        return lambda: client.post(
            f"{base}/stacklens/tunnel", content=envelope(dsn, make())
        ).raise_for_status()

    def reindex(n: int) -> Callable[[], None]:
        def step() -> None:
            with (
                stacklens_sdk.start_transaction(op="task", name="nightly-reindex"),
                stacklens_sdk.start_span(op="db", name=f"reindex shard {n}"),
            ):
                time.sleep(0.01)

        return step

    def lag(n: int) -> Callable[[], None]:
        return lambda: stacklens_sdk.capture_message(
            f"inventory sync lagging by {n * 17} items", level="warning"
        )

    steps: list[Callable[[], None]] = []
    for n in range(6):
        caller = checkout_from_web if n % 2 else checkout_from_batch
        steps.append(captured(lambda n=n, caller=caller: caller(100 + n), {"flow": caller.__name__}))
        if n < 5:
            steps.append(captured(lambda n=n: parse_quantity(["", "x", "3.5", "ten", "-"][n])))
        if n < 4:
            steps.append(captured(lambda n=n: lookup_sku(f"LENS-{n + 7}")))
        if n < 3:
            steps.extend([checkout(n), order(n), lag(n + 1)])
        if n < 2:
            steps.extend([tunnel(lambda n=n: browser_error(n)), reindex(n)])
    steps.append(tunnel(browser_pageload))
    return steps


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--app-key", required=True, help="the worker's per-service key")
    parser.add_argument("--browser-key", required=True, help="the project's primary key, used by the browser")
    parser.add_argument("--storage-path", required=True)
    parser.add_argument("--pause-file", required=True, help="written halfway")
    parser.add_argument("--resume-file", required=True, help="waited for before the second half")
    args = parser.parse_args(argv)

    stacklens_sdk.init(
        app_key=args.app_key,
        storage_path=args.storage_path,
        environment="e2e",
        release="e2e-app@1.0.0",
        in_app_include=["e2e_shop"],
        traces_sample_rate=1.0,
        browser_app_keys=[args.browser_key],
    )
    stacklens_sdk.set_user({"id": "u-42", "email": "ada@example.test"})
    stacklens_sdk.add_breadcrumb(category="navigation", message="worker started")
    app = TunnelMiddleware(SentryWsgiMiddleware(shop))
    server, base = serve(app)
    with httpx.Client(timeout=10.0) as client:
        steps = actions(base, browser_dsn(args.browser_key), client)
        half = len(steps) // 2
        for index, step in enumerate(steps):
            if index == half:
                Path(args.pause_file).write_text(str(index))
                deadline = time.monotonic() + 90
                while not Path(args.resume_file).exists():
                    if time.monotonic() > deadline:
                        print("e2e_app: no resume file within 90 s", file=sys.stderr)
                        return 1
                    time.sleep(0.05)
            step()
            time.sleep(PACE_SECONDS)
    stacklens_sdk.flush()
    server.shutdown()
    stacklens_sdk.close()
    print(json.dumps({"steps": len(steps), "events": sum(SITES.values())}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
