"""A real local HTTP server that answers the way a hostile or broken receiver does: it drips its answer one
byte at a time (never tripping a per-read timeout), or streams a huge body. It counts the bytes it managed
to write, so a test can tell how much of the answer the client really read."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CHUNK = 64 * 1024


@dataclass
class HostileReceiver:
    """``mode``: ``drip`` (status line and headers, then one body byte every ``interval_s`` for
    ``drip_s`` seconds, then the end), ``drip_headers`` (the status line itself one byte at a time),
    ``large`` (``size`` bytes of body, chunked or with a ``Content-Length`` if ``declare``), or ``ok``."""

    mode: str = "ok"
    interval_s: float = 0.5
    drip_s: float = 8.0
    size: int = 1024**3
    declare: bool = False
    body: bytes = b"ok"
    status: int = 200
    sent: int = 0  # body bytes written before the client went away or the answer ended
    arrivals: list[float] = field(default_factory=list)  # time.monotonic() of each request
    server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}/hook"

    def start(self) -> HostileReceiver:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _any(self) -> None:
                owner.arrivals.append(time.monotonic())
                self.rfile.read(int(self.headers.get("content-length") or 0))
                # A small send buffer, so what the client did not read stays here, not in kernel buffers.
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 64 * 1024)
                # The client may give up (deadline, cap): what it read is counted.
                with contextlib.suppress(BrokenPipeError, ConnectionResetError, TimeoutError):
                    getattr(self, f"_{owner.mode}")()

            def _ok(self) -> None:
                self.send_response(owner.status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(owner.body)))
                self.end_headers()
                self.wfile.write(owner.body)

            def _drip(self) -> None:
                self.send_response(200)
                self.send_header("content-length", str(int(owner.drip_s / owner.interval_s)))
                self.end_headers()
                self.wfile.flush()
                for _ in range(int(owner.drip_s / owner.interval_s)):
                    time.sleep(owner.interval_s)
                    self.wfile.write(b"x")
                    self.wfile.flush()
                    owner.sent += 1

            def _drip_headers(self) -> None:
                for byte in b"HTTP/1.1 200 OK\r\nX-Slow: " + b"s" * int(owner.drip_s / owner.interval_s):
                    self.wfile.write(bytes([byte]))
                    self.wfile.flush()
                    time.sleep(owner.interval_s)
                self.wfile.write(b"\r\ncontent-length: 2\r\n\r\nok")

            def _large(self) -> None:
                self.send_response(owner.status)
                self.send_header("content-type", "application/json")
                if owner.declare:
                    self.send_header("content-length", str(owner.size))
                else:
                    self.send_header("transfer-encoding", "chunked")
                self.end_headers()
                piece = b"[" + b" " * (CHUNK - 1)
                left = owner.size
                while left > 0:
                    part = piece[: min(CHUNK, left)]
                    if owner.declare:
                        self.wfile.write(part)
                    else:
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
                    owner.sent += len(part)
                    left -= len(part)
                if not owner.declare:
                    self.wfile.write(b"0\r\n\r\n")

            do_GET = do_POST = _any

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
