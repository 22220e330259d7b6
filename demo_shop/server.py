"""Run the demo shop: ``python -m demo_shop.server --app-key … --storage-path … --port 8001``.

The shop records its errors and transactions with stacklens_sdk into the storage path, and offers the
browser tunnel at ``/tunnel`` so page loads land in the same files.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import uvicorn

import stacklens_sdk
from demo.clock import apply_demo_clock, apply_demo_clock_to_log
from demo_shop.alert_inbox import inbox_router
from demo_shop.app import create_shop_app

TUNNEL_PATH = "/tunnel"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Lens Shop, the StackLens demo application")
    parser.add_argument("--app-key", required=True)
    parser.add_argument("--storage-path", required=True)
    parser.add_argument("--release", default="shop@1.4.0")
    parser.add_argument("--environment", default="production")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8001)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--webhook-secret-file", default=None, help="verify the alert inbox's signatures")
    args = parser.parse_args(argv)

    stacklens_sdk.init(
        app_key=args.app_key,
        storage_path=args.storage_path,
        environment=args.environment,
        release=args.release,
        traces_sample_rate=1.0,
        in_app_include=["demo_shop", "demo"],
        server_name="shop-web-1",
        before_send=apply_demo_clock,
        before_send_transaction=apply_demo_clock,
        # The shop's own log records (cart, checkout) fill the Logs page, linked to their traces.
        enable_logs=True,
        before_send_log=apply_demo_clock_to_log,
    )
    app = create_shop_app(args.seed, honour_demo_clock=True)
    app.router.routes.append(stacklens_sdk.tunnel.starlette_route(TUNNEL_PATH))
    app.include_router(inbox_router(Path(args.webhook_secret_file) if args.webhook_secret_file else None))
    print(f"Lens Shop on http://{args.host}:{args.port} writing to {args.storage_path}", flush=True)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
