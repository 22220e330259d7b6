"""Turning one ``@sentry/browser`` envelope into log lines.

The browser is configured with ``tunnel: "/stacklens/tunnel"`` and a DSN whose public key is an application
key (``https://stacklens_app_…@stacklens.invalid/1``); every envelope header carries that DSN. The tunnel
accepts the envelope only when the key is one this application was configured with, then writes each
``event``, ``transaction``, replay and session item as a log line exactly as the browser produced it.
"""

from __future__ import annotations

import json
import logging
import zlib
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from sentry_sdk.envelope import Envelope

from stacklens_sdk.client import current
from stacklens_sdk.items import WRITTEN_TYPES, UnreadableItem, item_payload
from stacklens_sdk.keys import check_app_key, is_app_key
from stacklens_sdk.logfile import DEFAULT_MAX_LINE_BYTES, LineTooLarge, LogWriter, WriteFailed, shared_writer
from stacklens_sdk.reports import REASON_TOO_LARGE, REASON_WRITE_FAILED, count_lost, write_client_report

logger = logging.getLogger(__name__)

DEFAULT_PATH = "/stacklens/tunnel"
# A browser envelope is one event or one page-load transaction, well under 1 MiB; replay segments are
# compressed and sent in small chunks. 2 MiB leaves room without letting a client fill the disk quickly.
DEFAULT_MAX_BODY_BYTES = 2 * 1024 * 1024


@dataclass(frozen=True)
class TunnelResponse:
    """HTTP status and JSON body for the browser."""

    status: int
    body: dict[str, Any]

    def encoded(self) -> bytes:
        return json.dumps(self.body).encode("utf-8")


def error_response(status: int, message: str) -> TunnelResponse:
    return TunnelResponse(status, {"error": message})


def envelope_app_key(headers: dict[str, Any]) -> str | None:
    """The public key of the envelope header's ``dsn`` (the browser's application key), if any."""
    dsn = headers.get("dsn")
    if not isinstance(dsn, str):
        return None
    try:
        return urlsplit(dsn).username or None
    except ValueError:
        return None


class Tunnel:
    """Checks and writes browser envelopes; shared by the ASGI route and the WSGI view."""

    def __init__(
        self,
        app_keys: Iterable[str] | None = None,
        storage_path: str | None = None,
        *,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        max_line_bytes: int | None = None,
    ) -> None:
        given = [check_app_key(k) for k in app_keys] if app_keys is not None else None
        self._app_keys = frozenset(given) if given is not None else None
        self._first_key = given[0] if given else None
        self._storage_path = storage_path
        self._max_line_bytes = max_line_bytes
        self.max_body_bytes = max_body_bytes

    def allowed_keys(self) -> frozenset[str]:
        """Keys given to the tunnel, else those given to ``stacklens_sdk.init`` (its app key and browser
        keys)."""
        if self._app_keys is not None:
            return self._app_keys
        state = current()
        return state.browser_app_keys if state is not None else frozenset()

    def default_key(self) -> str | None:
        """The key DSN-less items are written under: ``init``'s app key, else the first key given."""
        state = current()
        allowed = self.allowed_keys()
        if state is not None and state.app_key in allowed:
            return state.app_key
        return self._first_key

    def writer(self) -> LogWriter | None:
        state = current()
        if self._storage_path is not None:
            limit = self._max_line_bytes or (state.writer.max_line_bytes if state else DEFAULT_MAX_LINE_BYTES)
            return shared_writer(self._storage_path, limit)
        return state.writer if state is not None else None

    def decode_body(self, body: bytes, content_encoding: str | None) -> bytes:
        """Undo ``gzip``/``deflate`` within the size limit; raise ValueError for anything else."""
        encoding = (content_encoding or "identity").strip().lower()
        if encoding in ("", "identity"):
            return body
        if encoding not in ("gzip", "deflate"):
            raise ValueError(f"unsupported Content-Encoding {encoding!r}")
        inflater = zlib.decompressobj(wbits=47)  # 47: gzip or zlib header, detected
        data = inflater.decompress(body, self.max_body_bytes + 1)
        if len(data) > self.max_body_bytes:
            raise OverflowError
        return data

    def handle(self, body: bytes, content_encoding: str | None = None) -> TunnelResponse:
        """Check and write one envelope; the response says what happened."""
        if len(body) > self.max_body_bytes:
            return error_response(413, f"envelope larger than {self.max_body_bytes} bytes")
        try:
            raw = self.decode_body(body, content_encoding)
        except OverflowError:
            return error_response(413, f"envelope larger than {self.max_body_bytes} bytes")
        except (ValueError, zlib.error) as exc:
            return error_response(
                415 if "Content-Encoding" in str(exc) else 400, f"cannot decode the body: {exc}"
            )
        try:
            envelope = Envelope.deserialize(raw)
        except (ValueError, UnicodeDecodeError, AttributeError, TypeError) as exc:
            return error_response(400, f"malformed envelope: {exc}")
        if not isinstance(envelope.headers, dict):
            return error_response(400, "malformed envelope: the header is not a JSON object")
        key = envelope_app_key(envelope.headers)
        if key is None and _only_client_reports(envelope):
            # The browser SDK sends its client reports (what it dropped and why) without a DSN header. They
            # name no project, so they are written under this application's own key.
            key = self.default_key()
        if key is None or not is_app_key(key) or key not in self.allowed_keys():
            return error_response(403, "application key not accepted by this tunnel")
        writer = self.writer()
        if writer is None:
            return error_response(503, "stacklens_sdk.init() has not been called in this process")
        return self._write(envelope, key, writer)

    def _write(self, envelope: Envelope, key: str, writer: LogWriter) -> TunnelResponse:
        # Read every item before writing any, so a malformed envelope leaves nothing half-written.
        try:
            payloads = [
                (item, item_payload(item, envelope.headers))
                for item in envelope.items
                if item.type in WRITTEN_TYPES  # attachments, profiles, …: not kept (see stacklens_sdk.items)
            ]
        except UnreadableItem as exc:
            return error_response(400, f"malformed envelope item: {exc}")
        lost: Counter[tuple[str, str]] = Counter()
        failed = False
        for item, payload in payloads:
            try:
                writer.write(item.type or "event", key, payload)
            except LineTooLarge:
                count_lost(lost, item, REASON_TOO_LARGE)
            except WriteFailed:
                failed = True
                count_lost(lost, item, REASON_WRITE_FAILED)
        if not failed:
            # Recorded like the browser SDK's own client reports, so the loss is visible downstream. With the
            # directory unwritable the report could not be written either; the 503 tells the browser.
            write_client_report(writer, key, lost)
        if failed:
            return error_response(503, "the log directory is not writable")
        event_id = envelope.headers.get("event_id")
        return TunnelResponse(200, {"id": event_id} if isinstance(event_id, str) else {})


def _only_client_reports(envelope: Envelope) -> bool:
    return bool(envelope.items) and all(item.type == "client_report" for item in envelope.items)
