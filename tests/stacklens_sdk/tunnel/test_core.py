"""The browser tunnel: key checks, limits and writing, through a real WSGI server and the ASGI app."""

from __future__ import annotations

import asyncio
import gzip
import json
import threading
import zlib
from collections.abc import Iterator
from pathlib import Path
from wsgiref.simple_server import WSGIRequestHandler, make_server

import httpx
import pytest

import stacklens_sdk
from stacklens_sdk.tunnel import TunnelMiddleware, asgi_app, browser_dsn
from tests.stacklens_sdk.helpers import make_app_key, read_lines


def envelope(key: str, *items: tuple[dict[str, object], bytes]) -> bytes:
    header = {"event_id": "a" * 32, "dsn": browser_dsn(key), "sent_at": "2026-11-21T19:22:03.123Z"}
    parts = [json.dumps(header).encode()]
    for item_header, payload in items:
        parts.append(json.dumps({**item_header, "length": len(payload)}).encode())
        parts.append(payload)
    return b"\n".join(parts) + b"\n"


EVENT = (
    {"type": "event"},
    json.dumps({"event_id": "a" * 32, "platform": "javascript", "message": "hi"}).encode(),
)
REPLAY = ({"type": "replay_recording"}, b'{"segment_id":0}\n' + zlib.compress(b'[{"type":4}]'))
ATTACHMENT = ({"type": "attachment", "filename": "a.txt"}, b"binary")


class _Quiet(WSGIRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def wsgi_server(tmp_path: Path) -> Iterator[tuple[str, Path, str]]:
    """A real wsgiref server: an application wrapped in the tunnel middleware."""
    key = make_app_key()
    stacklens_sdk.init(app_key=key, storage_path=tmp_path)

    def application(environ: dict[str, object], start_response: object) -> list[bytes]:
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [b"the application"]

    server = make_server(
        "127.0.0.1", 0, TunnelMiddleware(application, max_body_bytes=64 * 1024), handler_class=_Quiet
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}", tmp_path, key
    server.shutdown()
    server.server_close()


def test_wsgi_tunnel_writes_items_and_refuses_foreign_keys(wsgi_server: tuple[str, Path, str]) -> None:
    base, storage, key = wsgi_server
    with httpx.Client(base_url=base, timeout=10) as client:
        ok = client.post("/stacklens/tunnel", content=envelope(key, EVENT, REPLAY, ATTACHMENT))
        assert ok.status_code == 200 and ok.json() == {"id": "a" * 32}
        assert client.get("/other").text == "the application"
        assert client.get("/stacklens/tunnel").status_code == 405
        foreign = client.post("/stacklens/tunnel", content=envelope(make_app_key(), EVENT))
        assert foreign.status_code == 403
        api_key = envelope(key, EVENT).replace(key.encode(), b"stacklens_api_" + b"a" * 32)
        assert client.post("/stacklens/tunnel", content=api_key).status_code == 403
        assert client.post("/stacklens/tunnel", content=b"not an envelope").status_code in (400, 403)
        bad_item = envelope(key, ({"type": "event"}, b"[1, 2]"))
        assert client.post("/stacklens/tunnel", content=bad_item).status_code == 400
        big = envelope(key, ({"type": "event"}, json.dumps({"m": "x" * 70_000}).encode()))
        assert client.post("/stacklens/tunnel", content=big).status_code == 413
        zipped = client.post(
            "/stacklens/tunnel",
            content=gzip.compress(envelope(key, EVENT)),
            headers={"Content-Encoding": "gzip"},
        )
        assert zipped.status_code == 200
        assert (
            client.post("/stacklens/tunnel", content=b"x", headers={"Content-Encoding": "br"}).status_code
            == 415
        )

    lines = read_lines(storage)
    assert [line["type"] for line in lines] == ["event", "replay_recording", "event"]
    assert {line["app_key"] for line in lines} == {key}
    assert lines[0]["payload"] == json.loads(EVENT[1])  # exactly what the browser sent
    replay = lines[1]["payload"]
    assert replay["segment_id"] == 0 and zlib.decompress(
        __import__("base64").b64decode(replay["recording_base64"])
    )


def test_asgi_tunnel_checks_keys_and_counts_oversized_items(tmp_path: Path) -> None:
    key, other = make_app_key(), make_app_key()
    app = asgi_app(app_keys=[key], storage_path=str(tmp_path))

    async def run() -> list[int]:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://app") as client:
            huge = (
                {"type": "transaction"},
                json.dumps({"type": "transaction", "spans": [], "x": "y" * 1_100_000}).encode(),
            )
            statuses = [
                (await client.post("/", content=envelope(key, EVENT, huge))).status_code,
                (await client.post("/", content=envelope(other, EVENT))).status_code,
                (await client.get("/")).status_code,
                (await client.post("/", content=b"x" * (3 * 1024 * 1024))).status_code,
            ]
            return statuses

    assert asyncio.run(run()) == [200, 403, 405, 413]
    lines = read_lines(tmp_path)
    assert [line["type"] for line in lines] == ["event", "client_report"]
    assert lines[1]["payload"]["discarded_events"] == [
        {"reason": "buffer_overflow", "category": "transaction", "quantity": 1},
        {"reason": "buffer_overflow", "category": "span", "quantity": 1},
    ]


def test_browser_dsn_carries_the_key() -> None:
    key = make_app_key("web")
    assert browser_dsn(key) == f"https://{key}@stacklens.invalid/1"
    with pytest.raises(ValueError, match="cannot be used in a browser DSN"):
        browser_dsn(make_app_key("web-shop"))


def test_dsn_less_client_reports_are_accepted_and_nothing_else_is(tmp_path: Path) -> None:
    key = make_app_key()
    app = asgi_app(app_keys=[key], storage_path=str(tmp_path))
    report = json.dumps(
        {
            "timestamp": 1.0,
            "discarded_events": [{"reason": "ratelimit_backoff", "category": "error", "quantity": 2}],
        }
    ).encode()

    def bare(*items: tuple[dict, bytes]) -> bytes:
        parts = [b"{}"]
        for headers, payload in items:
            parts += [json.dumps({**headers, "length": len(payload)}).encode(), payload]
        return b"\n".join(parts) + b"\n"

    async def run() -> list[int]:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://app") as client:
            return [
                (await client.post("/", content=bare(({"type": "client_report"}, report)))).status_code,
                (await client.post("/", content=bare(EVENT))).status_code,
            ]

    assert asyncio.run(run()) == [200, 403]
    lines = read_lines(tmp_path)
    assert [(line["type"], line["app_key"]) for line in lines] == [("client_report", key)]
