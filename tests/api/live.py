"""The app on a real uvicorn server in this process (its own port), for tests that need real HTTP."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import uvicorn

from stacklens.cli.app import build_app
from stacklens.public_url import serving
from stacklens.settings import Settings


@contextmanager
def serve(settings: Settings, operator_token: str | None = None) -> Iterator[str]:
    """Yield the base URL of a uvicorn server running the app for ``settings``; stop it afterwards.
    ``operator_token`` opens the operator's routes (`stacklens sql`) as `stacklens serve`'s token does."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    app = build_app(serving(settings, "127.0.0.1", port))
    app.state.pipelines_token = operator_token
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="critical"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.started, "uvicorn did not start"
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=15)
