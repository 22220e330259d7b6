"""The notebook client and `stacklens query` against a real server (uvicorn, the real app): a DataFrame
through Parquet over HTTP equal to the JSON answer, a refused query raising the server's message, and the
CLI's table, CSV, JSON and Parquet outputs."""

from __future__ import annotations

import json
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pytest
import uvicorn

from api.app import create_app
from stacklens.cli.main import main
from stacklens.client import StackLens, StackLensError
from stacklens.control import accounts
from stacklens.control.db import migrate_control_store, session_scope
from stacklens.control.projects import create_project
from stacklens.settings import Settings
from stacklens.warehouse.client import get_warehouse
from stacklens.warehouse.migrations import apply_migrations
from tests.stacklens.performance.perf_seed import seed

WINDOW = {"since": "2026-11-06T00:00:00Z", "until": "2026-11-20T13:00:00Z"}


@pytest.fixture
def server(settings: Settings) -> Iterator[tuple[str, str]]:
    migrate_control_store(settings)
    apply_migrations(settings)
    with session_scope(settings) as session:
        org, api_key = accounts.create_organization(
            session, "Acme", f"{uuid.uuid4().hex[:8]}@example.test", "password-123"
        )
        project, _ = create_project(session, org.id, "Web App")
        org_id, project_id = org.id, project.id
    seed(get_warehouse(settings), org_id, project_id, loads=50)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    instance = uvicorn.Server(
        uvicorn.Config(create_app(settings), host="127.0.0.1", port=port, log_level="warning")
    )
    thread = threading.Thread(target=instance.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not instance.started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert instance.started
    yield f"http://127.0.0.1:{port}", api_key
    instance.should_exit = True
    thread.join(timeout=10)


def test_client_and_cli(server, tmp_path: Path, capsys) -> None:
    url, key = server
    client = StackLens(url, key)
    request_close = client.close
    spec = {"group_by": ["release"], "aggregates": ["count", "p75:lcp_ms"], "order_by": "release", **WINDOW}
    frame = client.explore("pageloads", **spec)
    data = client.query("pageloads", **spec)
    assert frame.columns == data["columns"] == ["release", "count", "lcp_p75_ms", "samples"]
    assert frame.to_dicts() == data["rows"] and frame["count"].sum() == 50
    with pytest.raises(StackLensError, match="group_by\\[0\\]: unknown field 'nope'"):
        client.explore("pageloads", group_by=["nope"])
    with (
        pytest.raises(StackLensError, match="Invalid API Key"),
        StackLens(url, "stacklens_api_wrong") as wrong,
    ):
        wrong.query("pageloads")
    request_close()

    common = ["query", "pageloads", "--url", url, "--api-key", key, "--group-by", "release", "--agg", "count"]
    window = ["--since", WINDOW["since"], "--until", WINDOW["until"], "--order-by", "release"]
    assert main([*common, *window]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].split() == ["release", "count", "samples"] and table[1].split()[0] == "shop@1.0.0"
    assert main([*common, *window, "--format", "csv", "--filter", "environment|in|production,staging"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == "release,count,samples"
    # JSON: the full result streamed (columns, rows, meta; a download reads no series), or with --interval the
    # query's answer with its series — each the rows the JSON API answers for the same query.
    with StackLens(url, key) as again:
        answer = again.query(
            "pageloads", group_by=["release"], aggregates=["count"], order_by="release", **WINDOW
        )
    assert main([*common, *window, "--format", "json"]) == 0
    streamed = json.loads(capsys.readouterr().out)
    assert streamed["columns"] == answer["columns"] == ["release", "count", "samples"]
    assert streamed["rows"] == answer["rows"] and sum(r["count"] for r in streamed["rows"]) == 50
    assert streamed["series"] == [] and streamed["meta"]["truncated"] is False
    assert set(streamed["meta"]) == {"rows_read", "elapsed_ms", "truncated"}
    assert main([*common, *window, "--format", "json", "--interval", "1d"]) == 0
    with_series = json.loads(capsys.readouterr().out)
    assert with_series["columns"] == answer["columns"] and with_series["rows"] == answer["rows"]
    assert {s["group"]["release"] for s in with_series["series"]} == {r["release"] for r in answer["rows"]}
    assert sum(sum(s["values"]["count"]) for s in with_series["series"]) == 50
    # rows_read: the engine's rows read from storage (50 page loads, read by the table and the series), not
    # the answer's rows.
    assert with_series["meta"]["rows_read"] >= 100 and with_series["meta"]["truncated"] is False
    out = tmp_path / "q.parquet"
    assert main([*common, *window, "--format", "parquet", "--output", str(out)]) == 0
    assert pl.read_parquet(out)["count"].sum() == 50
    assert main([*common, "--filter", "release"]) == 2
    assert "FIELD|OP|VALUE" in capsys.readouterr().err
