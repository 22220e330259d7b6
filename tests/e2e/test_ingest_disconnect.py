"""A shipper killed while its batch is on the wire (what the main path does with SIGKILL, at a random moment).

The server must treat the half-sent batch as never sent: no unhandled exception in its log, nothing landed,
and the next request served as usual.
"""

from __future__ import annotations

import json
import socket
import time
import uuid
from pathlib import Path

import httpx
import pytest

from tests.e2e.e2e_stack import Stack, clean_env, start_service, unhandled_errors

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]


def half_sent_batch(port: int, api_key: str, app_key: str) -> None:
    """Declare a whole batch, send part of it, and vanish (no FIN handshake wait, like a killed process)."""
    line = json.dumps({"v": 1, "type": "event", "app_key": app_key, "ts": "2026-01-01T00:00:00.000Z",
                       "payload": {"event_id": uuid.uuid4().hex, "message": "half sent", "level": "error"}})  # fmt: skip
    body = (line + "\n").encode() * 50
    head = (
        f"POST /api/ingest HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {api_key}\r\n"
        f"Content-Type: application/x-ndjson\r\nIdempotency-Key: {uuid.uuid4().hex}\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode()
    with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
        conn.sendall(head + body[: len(body) // 3])
        time.sleep(0.3)  # the server is now reading the body


def test_a_batch_cut_off_mid_body_is_dropped_quietly(tmp_path: Path) -> None:
    stack = Stack(tmp_path, clean_env(tmp_path / "data"))
    try:
        with stack.reporting():
            service = start_service(stack, "Cut Off", ("owner@cutoff.example", "cut-off-123"), "Web")
            org = service.org
            project = service.project
            port = service.port
            base = service.base
            server = service.server

            half_sent_batch(port, org["api_key"], project["app_key"])
            time.sleep(1.0)
            headers = {"Authorization": f"Bearer {org['api_key']}"}
            listing = httpx.get(f"{base}/api/projects/{project['slug']}/issues", headers=headers, timeout=30)
            assert listing.status_code == 200 and listing.json()["issues"] == [], listing.text
            errors = unhandled_errors(server.output())
            assert not errors, f"a batch cut off mid-body logged unhandled exceptions: {errors}"
    finally:
        stack.close()
