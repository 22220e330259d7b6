"""Run the demo shop: ``python -m demo_shop.server --app-key … --storage-path … --port 8001``.

The shop records its errors and transactions with stacklens_sdk into the storage path, and offers the
browser tunnel at ``/tunnel`` so page loads land in the same files.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

import uvicorn

import stacklens_sdk
from demo.clock import apply_demo_clock, apply_demo_clock_to_log
from demo_shop import attachments
from demo_shop.alert_inbox import inbox_router
from demo_shop.app import create_shop_app

TUNNEL_PATH = "/tunnel"
APP_KEY_ENV = "STACKLENS_DEMO_APP_KEY"
# The service the shop's log records name (the Logs page's Service column): the shop writes with the project's
# primary app key, which names no service; the worker's per-service key names "worker".
SHOP_SERVICE = "shop"


def _shop_log(log: dict[str, Any], hint: Any = None) -> dict[str, Any] | None:
    """The shop's log records, named by service and moved to a history request's moment. uvicorn's own
    "Exception in ASGI application" records are left out: uvicorn writes them after the request's scope has
    ended, so they carried the process's one trace (every failed request of the day in one trace), and the
    exception is already the request's error event, in its own trace."""
    name = (log.get("attributes") or {}).get("logger.name", "")
    if str(name.get("value", "") if isinstance(name, dict) else name).startswith("uvicorn"):
        return None
    moved = apply_demo_clock_to_log(log, hint)
    if moved is not None:
        moved.setdefault("attributes", {})["service.name"] = SHOP_SERVICE
    return moved


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Lens Shop, the StackLens demo application")
    parser.add_argument(
        "--app-key",
        default=os.environ.get(APP_KEY_ENV),
        help=f"the project's app key; default ${APP_KEY_ENV} (`stacklens up` passes it there: an argument is "
        "visible to every user in `ps`)",
    )
    parser.add_argument("--storage-path", required=True)
    parser.add_argument("--release", default="shop@1.4.0")
    parser.add_argument("--environment", default="production")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8001)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--webhook-secret-file", default=None, help="verify the alert inbox's signatures")
    args = parser.parse_args(argv)
    if not args.app_key:
        parser.error(f"the app key is missing: set {APP_KEY_ENV} (or pass --app-key)")

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
        before_send_log=_shop_log,
    )
    attachments.configure(os.environ.get(attachments.ENVELOPE_URL_ENV), args.app_key)
    app = create_shop_app(args.seed, honour_demo_clock=True)
    app.router.routes.append(stacklens_sdk.tunnel.starlette_route(TUNNEL_PATH))
    app.include_router(inbox_router(Path(args.webhook_secret_file) if args.webhook_secret_file else None))
    print(f"Lens Shop on http://{args.host}:{args.port} writing to {args.storage_path}", flush=True)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
