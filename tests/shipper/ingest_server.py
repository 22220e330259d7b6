"""A real local HTTP server speaking the ingest contract (docs/architecture.md §11.2) for the shipper's tests.

It dedups by Idempotency-Key and by each line's ``payload.event_id``, counts what landed, and can be told
to misbehave: be down, flap, answer 429 (with or without Retry-After), follow a script of answers, commit and
then answer after the client's timeout, refuse large bodies with 413, or refuse the key with 401.
"""

from __future__ import annotations

import gzip
import json
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import zstandard

API_KEY = "stacklens_api_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6"
APP_KEY = "stacklens_app_" + "Z9y8X7w6V5u4T3s2R1q0P9o8"


@dataclass
class Behaviour:
    """What the server does with the next POSTs. Change fields at any time from the test."""

    status: int = 200  # 200, or a forced error status for every POST (401, 409, 422, 429, 5xx)
    retry_after: str | None = None
    flap: bool = False  # alternate 503 and normal answers
    commit_then_sleep: float = 0.0  # land the batch, then wait this long before answering
    max_lines: int = 0  # > 0: bodies with more lines get 413
    api_key: str = API_KEY
    known_app_keys: tuple[str, ...] = (APP_KEY,)
    # Lines holding this text are refused one by one in a 200, as a service release that cannot read some
    # payload shape does; None takes them (the release that can).
    refuse_lines_with: str | None = None
    # Answers for the next POSTs, one each, before the rules above: (status, Retry-After or None).
    script: list[tuple[int, str | None]] = field(default_factory=list)


@dataclass
class Landed:
    counts: Counter[str] = field(default_factory=Counter)  # event id -> times landed (must be 1)
    keys: dict[str, dict] = field(default_factory=dict)  # Idempotency-Key -> first answer
    requests: int = 0
    statuses: Counter[int] = field(default_factory=Counter)
    encodings: Counter[str] = field(default_factory=Counter)
    duplicates: int = 0
    key_replays: int = 0
    posts: list[tuple[float, int]] = field(default_factory=list)  # (time.monotonic(), status) per POST


class IngestServer:
    def __init__(self, port: int = 0) -> None:
        self.behaviour = Behaviour()
        self.landed = Landed()
        self.lock = threading.Lock()
        self._flip = False
        self.port = port
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> IngestServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go out as two writes

            def log_message(self, *args: object) -> None:
                pass

            def _send(self, status: int, payload: dict, headers: dict[str, str] | None = None) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                if self.path != "/api/auth/verify":
                    self._send(404, {"error": "Not Found"})
                elif self.headers.get("Authorization") != f"Bearer {server.behaviour.api_key}":
                    self._send(401, {"error": "Invalid API Key"})
                else:
                    self._send(
                        200, {"valid": True, "organization": "Acme", "created_at": "2026-01-01T00:00:00Z"}
                    )

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                raw = self.rfile.read(length)
                if len(raw) != length:
                    # The client died mid-body (kill -9): nothing lands, like any real server. An empty
                    # gzip body decompresses to nothing, so without this check it would "land" as 0 lines.
                    self.close_connection = True
                    return
                status, payload, headers = server.handle(self.path, dict(self.headers.items()), raw)
                self._send(status, payload, headers)

        ThreadingHTTPServer.allow_reuse_address = True
        ThreadingHTTPServer.handle_error = lambda *a: None  # clients killed mid-request are expected here
        self._httpd = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self._httpd.daemon_threads = True
        self.port = self._httpd.server_address[1]
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Go down: the port refuses connections until :meth:`start` again (same port)."""
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def handle(self, path: str, headers: dict[str, str], raw: bytes) -> tuple[int, dict, dict[str, str]]:
        b = self.behaviour
        with self.lock:
            self.landed.requests += 1
        if path != "/api/ingest":
            return 404, {"error": "Not Found"}, {}
        with self.lock:
            scripted = b.script.pop(0) if b.script else None
        if scripted is not None:
            status, retry_after = scripted
            error = "Rate Limited" if status == 429 else "Service Unavailable"
            return self._status(status, {"error": error}, {"Retry-After": retry_after} if retry_after else {})
        if headers.get("Authorization") != f"Bearer {b.api_key}" or b.status == 401:
            return self._status(401, {"error": "Invalid API Key"})
        if b.status == 429:
            return self._status(
                429, {"error": "Rate Limited"}, {"Retry-After": b.retry_after} if b.retry_after else {}
            )
        if b.status in (409, 422):
            return self._status(
                b.status, {"error": "Conflict", "detail": "the Idempotency-Key was used for another body"}
            )
        if b.status >= 500:
            return self._status(
                b.status,
                {"error": "Service Unavailable"},
                {"Retry-After": b.retry_after} if b.retry_after else {},
            )
        if b.flap:
            with self.lock:
                self._flip = not self._flip
                flip = self._flip
            if flip:
                return self._status(503, {"error": "Service Unavailable"})
        encoding = headers.get("Content-Encoding", "identity")
        body = (
            gzip.decompress(raw)
            if encoding == "gzip"
            else zstandard.ZstdDecompressor().decompressobj().decompress(raw)
            if encoding == "zstd"
            else raw
        )
        lines = body.splitlines()
        # Attribution as the service does it (docs/architecture.md §11.2): a line's own app_key, else the
        # header's.
        header_key = headers.get("X-Stacklens-App-Key")
        attributable = [self._app_key_of(line, header_key) in b.known_app_keys for line in lines]
        if lines and not any(attributable):
            return self._status(404, {"error": "Application Not Found"})
        if b.max_lines and len(lines) > b.max_lines:
            return self._status(413, {"error": "Payload Too Large", "detail": "split the batch"})
        key = headers.get("Idempotency-Key", "")
        with self.lock:
            self.landed.encodings[encoding] += 1
            if key in self.landed.keys:
                self.landed.key_replays += 1
                answer = self.landed.keys[key]
            else:
                accepted = duplicates = 0
                rejected = []
                for i, line in enumerate(lines):
                    if not attributable[i]:
                        rejected.append(
                            {
                                "line": i + 1,
                                "error": "Application Not Found: the app key is not a current app key",
                            }
                        )
                        continue
                    if b.refuse_lines_with and b.refuse_lines_with.encode() in line:
                        rejected.append({"line": i + 1, "error": "the payload could not be read"})
                        continue
                    try:
                        event_id = json.loads(line)["payload"]["event_id"]
                    except (ValueError, KeyError, TypeError):
                        rejected.append({"line": i + 1, "error": "no event id"})
                        continue
                    if self.landed.counts[event_id]:
                        duplicates += 1
                        self.landed.duplicates += 1
                    else:
                        self.landed.counts[event_id] += 1
                        accepted += 1
                answer = {
                    "batch_id": key,
                    "accepted": accepted,
                    "duplicates": duplicates,
                    "rejected": rejected,
                }
                self.landed.keys[key] = answer
            self.landed.statuses[200] += 1
            self.landed.posts.append((time.monotonic(), 200))
        if b.commit_then_sleep:
            time.sleep(b.commit_then_sleep)
        return 200, answer, {}

    @staticmethod
    def _app_key_of(line: bytes, header_key: str | None) -> str | None:
        try:
            own = json.loads(line).get("app_key")
        except (ValueError, AttributeError):
            return header_key
        return own if isinstance(own, str) and own else header_key

    def _status(
        self, status: int, payload: dict, headers: dict[str, str] | None = None
    ) -> tuple[int, dict, dict[str, str]]:
        with self.lock:
            self.landed.statuses[status] += 1
            self.landed.posts.append((time.monotonic(), status))
        return status, payload, headers or {}

    def ids(self) -> set[str]:
        with self.lock:
            return set(self.landed.counts)
