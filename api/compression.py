"""Answers compressed for clients that accept gzip: pages and JSON above a kilobyte.

A page is text that compresses to a fraction of itself — the trace page of 5,000 spans is 647 KiB of HTML and
about a tenth of that in gzip — so a browser on a slow link waits for far fewer bytes. Starlette's
``GZipMiddleware`` does the work (large bodies are compressed on a worker thread); this wrapper keeps it off
the paths where it costs without helping:

- the entrances (envelope, store, OTLP, check-ins, ``/api/ingest``): their requests are the payload and their
  answers a few bytes, and they are the service's hottest paths;
- ``/mcp`` (MCP Streamable HTTP): an answer may be a stream of messages that must reach the agent as written;
- downloads (``Content-Disposition: attachment``: exports streamed as the reader takes them, whose pace
  holds a query slot — docs/explore.md — attachments, PDFs), and bodies already compressed or binary and
  event streams, by their content type.

An answer that already has a ``Content-Encoding`` is passed through as it is.
"""

from __future__ import annotations

import re

from starlette.datastructures import Headers
from starlette.middleware.gzip import DEFAULT_EXCLUDED_CONTENT_TYPES, GZipResponder
from starlette.types import ASGIApp, Message, Receive, Scope, Send

# Smaller answers gain less than the header and the work cost (a typical API answer of a few hundred bytes).
MINIMUM_SIZE = 1024
# zlib's default level: ~3× faster than 9 for a percent or two more bytes (the machine's CPU is shared with
# ingest).
LEVEL = 6
EXCLUDED_TYPES = (
    *DEFAULT_EXCLUDED_CONTENT_TYPES,
    "application/octet-stream",  # attachment downloads: files as sent, often already compressed
    "application/vnd.apache.parquet",  # compressed columns
    "application/pdf",
    "application/zstd",
)
# The entrances' paths (api/routers/{envelope,otlp,ingest,monitor_checkins}.py) and the MCP endpoint.
UNCOMPRESSED_PATHS = re.compile(r"^/(api/(\d+/(envelope|store|otlp|cron)/|ingest/?$)|mcp(/|$))")


class _Responder(GZipResponder):
    """Starlette's gzip responder, except for downloads, which go as the application sends them."""

    downloading = False

    async def send_with_compression(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            disposition = Headers(raw=message.get("headers", [])).get("content-disposition", "")
            self.downloading = disposition.strip().lower().startswith("attachment")
        if self.downloading:
            await self.send(message)
            return
        await super().send_with_compression(message)


class CompressedAnswers:
    """ASGI middleware: gzip for the HTTP answers of clients that accept it, except on
    :data:`UNCOMPRESSED_PATHS` and for downloads."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or UNCOMPRESSED_PATHS.match(scope.get("path", ""))
            or "gzip" not in Headers(scope=scope).get("accept-encoding", "")
        ):
            await self.app(scope, receive, send)
            return
        responder = _Responder(
            self.app, MINIMUM_SIZE, compresslevel=LEVEL, exclude_content_types=EXCLUDED_TYPES
        )
        await responder(scope, receive, send)
