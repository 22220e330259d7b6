"""The WSGI tunnel: POST only, the body's length checked before it is read, other paths passed through."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from stacklens_sdk.tunnel import browser_dsn
from stacklens_sdk.tunnel.wsgi import TunnelMiddleware, wsgi_app
from tests.stacklens_sdk.helpers import make_app_key, read_lines


def _envelope(key: str) -> bytes:
    event = json.dumps({"event_id": "b" * 32, "platform": "javascript", "message": "hi"}).encode()
    header = json.dumps({"event_id": "b" * 32, "dsn": browser_dsn(key)}).encode()
    return b"\n".join([header, json.dumps({"type": "event", "length": len(event)}).encode(), event]) + b"\n"


def _call(
    app: Any, method: str, body: bytes = b"", path: str = "/stacklens/tunnel", length: str | None = None
) -> tuple[str, dict, bytes]:
    answer: dict[str, Any] = {}

    def start_response(status: str, headers: list[tuple[str, str]]) -> None:
        answer.update(status=status, headers=dict(headers))

    environ = {
        "REQUEST_METHOD": method,
        "PATH_INFO": path,
        "CONTENT_LENGTH": str(len(body)) if length is None else length,
        "wsgi.input": io.BytesIO(body),
    }
    out = b"".join(app(environ, start_response))
    return answer["status"], answer["headers"], out


def test_an_envelope_is_written_and_wrong_requests_are_refused(tmp_path: Path) -> None:
    key = make_app_key()
    app = wsgi_app([key], str(tmp_path), max_body_bytes=4096)
    status, _, _ = _call(app, "POST", _envelope(key))
    assert status == "200 OK"
    assert [line["payload"]["message"] for line in read_lines(tmp_path)] == ["hi"]

    status, headers, _ = _call(app, "GET")
    assert status.startswith("405") and headers["Allow"] == "POST"
    assert _call(app, "POST", b"x", length="ten")[0].startswith("400")
    status, _, body = _call(app, "POST", b"", length="999999")  # refused before reading a byte
    assert status.startswith("413") and b"4096" in body
    assert _call(app, "POST", _envelope(make_app_key()))[0].startswith("403")


def test_the_middleware_serves_its_path_only(tmp_path: Path) -> None:
    def application(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [b"the application"]

    key = make_app_key()
    app = TunnelMiddleware(application, "/tunnel/", [key], str(tmp_path))
    assert _call(app, "GET", path="/checkout")[2] == b"the application"
    assert _call(app, "POST", _envelope(key), path="/tunnel")[0] == "200 OK"
