"""A real local HTTP receiver for outbound tests: verifies Standard Webhooks signatures, can answer 503, 429
(with Retry-After) or stall past the sender's timeout, and counts what it accepted per ``webhook-id``."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes
    signature_ok: bool | None

    def json(self) -> dict:
        return json.loads(self.body)


@dataclass
class Receiver:
    secret: str | None = None  # whsec_… to verify signatures with
    script: list[tuple[int, dict[str, str], float]] = field(
        default_factory=list
    )  # (status, headers, stall s)
    received: list[Received] = field(default_factory=list)
    accepted: Counter = field(default_factory=Counter)  # webhook-id -> times answered 2xx
    arrival_times: list[float] = field(default_factory=list)  # time.monotonic() of each request
    server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}/hook"

    def answer(self, status: int, headers: dict[str, str] | None = None, stall_s: float = 0.0) -> None:
        """Queue the answer to the next request (then back to 200)."""
        self.script.append((status, headers or {}, stall_s))

    def verify(self, headers: dict[str, str], body: bytes) -> bool:
        assert self.secret is not None
        key = base64.b64decode(self.secret.removeprefix("whsec_"))
        signed = f"{headers['webhook-id']}.{headers['webhook-timestamp']}.".encode() + body
        expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
        given = [
            s.split(",", 1)[1] for s in headers.get("webhook-signature", "").split() if s.startswith("v1,")
        ]
        return any(hmac.compare_digest(expected, g) for g in given)

    def start(self) -> Receiver:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                owner.arrival_times.append(time.monotonic())
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                headers = {k.lower(): v for k, v in self.headers.items()}
                ok = owner.verify(headers, body) if owner.secret and "webhook-id" in headers else None
                owner.received.append(Received(self.path, headers, body, ok))
                status, extra, stall = owner.script.pop(0) if owner.script else (200, {}, 0.0)
                if ok is False:
                    status = 401
                if stall:
                    time.sleep(stall)
                if 200 <= status < 300 and "webhook-id" in headers:
                    owner.accepted[headers["webhook-id"]] += 1
                payload = b"ok" if status < 300 else b'{"error": "scripted"}'
                try:
                    self.send_response(status)
                    for key, value in extra.items():
                        self.send_header(key, value)
                    self.send_header("content-length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):  # the sender gave up (timeout test)
                    pass

            def log_message(self, *_: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
