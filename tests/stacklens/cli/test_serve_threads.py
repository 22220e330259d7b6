"""`stacklens serve` runs synchronous handlers on at most WORKER_THREADS threads (anyio's default is 40):
twelve slow requests at once are served, never more than eight at a time."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import anyio.to_thread
import httpx
from fastapi import FastAPI

from stacklens.cli.serve import WORKER_THREADS, server_for, uvicorn_config
from tests.stacklens.alerts.helpers import free_port


def test_synchronous_handlers_share_a_bounded_pool() -> None:
    app = FastAPI()
    running, peak, lock = [0], [0], threading.Lock()

    @app.get("/slow")
    def slow() -> dict[str, bool]:
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        time.sleep(0.3)
        with lock:
            running[0] -= 1
        return {"ok": True}

    @app.get("/tokens")
    async def tokens() -> dict[str, int]:
        return {"tokens": int(anyio.to_thread.current_default_thread_limiter().total_tokens)}

    port = free_port()
    server = server_for(uvicorn_config(app, "127.0.0.1", port))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 30
        while not server.started:
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.02)
        with ThreadPoolExecutor(12) as pool:
            answers = list(
                pool.map(lambda _: httpx.get(f"http://127.0.0.1:{port}/slow", timeout=30), range(12))
            )
        assert all(a.status_code == 200 for a in answers)
        assert httpx.get(f"http://127.0.0.1:{port}/tokens").json() == {"tokens": WORKER_THREADS}
        assert WORKER_THREADS == 8 and 2 <= peak[0] <= WORKER_THREADS, peak
    finally:
        server.should_exit = True
        thread.join(10)
