"""Answers in gzip when the client asks (api/compression.py): the whole app's pages and JSON above a
kilobyte, never the entrances' answers, MCP's, event streams or binary downloads."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from api.compression import CompressedAnswers

GZIP = {"Accept-Encoding": "gzip"}
IDENTITY = {"Accept-Encoding": "identity"}


def test_pages_and_json_come_gzipped_when_asked(app_client: TestClient) -> None:
    for path in ("/openapi.json", "/login"):
        plain = app_client.get(path, headers=IDENTITY)
        packed = app_client.get(path, headers=GZIP)
        assert plain.status_code == packed.status_code == 200, path
        assert "content-encoding" not in plain.headers and len(plain.content) > 1024, path
        assert packed.headers["content-encoding"] == "gzip" and "Accept-Encoding" in packed.headers["vary"]
        # httpx decodes the body: the same answer, in fewer bytes on the wire.
        assert packed.content == plain.content, path
        assert int(packed.headers["content-length"]) < len(plain.content) / 2, path
    assert json.loads(app_client.get("/openapi.json", headers=GZIP).content)["info"]["title"] == "StackLens"


def test_a_small_answer_is_sent_as_it_is(app_client: TestClient) -> None:
    answer = app_client.get("/api/health", headers=GZIP)
    assert answer.status_code == 200 and len(answer.content) < 1024
    assert "content-encoding" not in answer.headers


def _body(request: Request) -> Response:
    kind = request.query_params.get("type", "application/json")
    headers = (
        {"Content-Disposition": 'attachment; filename="x.json"'} if "download" in request.query_params else {}
    )
    return Response(b'{"x": "' + b"a" * 8000 + b'"}', media_type=kind, headers=headers)


@pytest.fixture(scope="module")
def tiny() -> TestClient:
    routes = [Route("/{path:path}", _body, methods=["GET", "POST"])]
    return TestClient(CompressedAnswers(Starlette(routes=routes)))


@pytest.mark.parametrize(
    "path",
    [
        "/api/42/envelope/",
        "/api/42/store/",
        "/api/42/otlp/v1/traces",
        "/api/42/cron/nightly/stacklens_app_x/",
        "/api/ingest",
        "/mcp",
    ],
)
def test_the_entrances_and_mcp_answer_uncompressed(tiny: TestClient, path: str) -> None:
    answer = tiny.post(path, headers=GZIP)
    assert answer.status_code == 200 and "content-encoding" not in answer.headers


@pytest.mark.parametrize(
    "kind",
    ["application/octet-stream", "application/vnd.apache.parquet", "application/pdf", "text/event-stream"],
)
def test_binary_downloads_and_event_streams_are_not_compressed(tiny: TestClient, kind: str) -> None:
    answer = tiny.get("/api/events/1/attachments/2", params={"type": kind}, headers=GZIP)
    assert "content-encoding" not in answer.headers


def test_a_download_goes_as_it_is_sent(tiny: TestClient) -> None:
    """An export streamed as its reader takes it holds a query slot at the reader's pace (docs/explore.md)."""
    answer = tiny.get("/api/explore/download", params={"download": "1"}, headers=GZIP)
    assert "content-encoding" not in answer.headers and answer.json()["x"] == "a" * 8000
    assert tiny.get("/api/explore/download", headers=GZIP).headers["content-encoding"] == "gzip"


def test_the_same_path_elsewhere_is_compressed(tiny: TestClient) -> None:
    """The exclusions are the entrances' paths, not every path that names one."""
    for path in ("/api/projects/envelope/feedback", "/orgs/acme/mcp-notes", "/api/ingestion-stats"):
        answer = tiny.get(path, headers={"Accept-Encoding": "identity;q=0, gzip"})
        assert answer.headers.get("content-encoding") == "gzip", path
        assert answer.json()["x"] == "a" * 8000
