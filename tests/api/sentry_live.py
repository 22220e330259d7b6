"""A real StackLens server for the Sentry-protocol tests, and what they build and read: envelopes, events
and the rows that landed."""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

from clickhouse_connect.driver.client import Client

from stacklens.ingest.front_door import settle_front_doors
from tests.api.routers.test_ingest import error_payload

# The test's warehouse client, for the helpers below that read what landed (set per test by `server`).
_warehouse: list[Any] = []


class AnsweredRows:
    """A warehouse client that reads as the server's own readers do: every row answered before a read has
    landed first (an answered event may sit in the front door's spool for up to a second)."""

    def __init__(self, client: Client) -> None:
        self._client = client

    def query(self, *args: Any, **kwargs: Any) -> Any:
        settle_front_doors()
        return self._client.query(*args, **kwargs)

    def command(self, *args: Any, **kwargs: Any) -> Any:
        settle_front_doors()
        return self._client.command(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


def envelope(items: list[tuple[dict[str, Any], bytes]], headers: dict[str, Any] | None = None) -> bytes:
    parts = [json.dumps(headers or {}).encode()]
    for item_headers, payload in items:
        parts += [json.dumps({**item_headers, "length": len(payload)}).encode(), payload]
    return b"\n".join(parts) + b"\n"


def event_item(payload: dict[str, Any]) -> tuple[dict[str, Any], bytes]:
    return {"type": "event"}, json.dumps(payload).encode()


def stored(org_id: int, event_id: str, table: str = "events") -> int:
    return int(
        _warehouse[0]
        .query(
            f"SELECT count() FROM {table} FINAL WHERE org_id = {{org:UInt64}} AND event_id = {{id:String}}",  # noqa: S608 - a table name of the tests'
            parameters={"org": org_id, "id": event_id},
        )
        .result_rows[0][0]
    )


def fresh_event() -> dict[str, Any]:
    return {**error_payload(3), "event_id": uuid.uuid4().hex}


def wait_stored(org_id: int, event_id: str) -> list[tuple[Any, ...]]:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        rows = (
            _warehouse[0]
            .query(
                "SELECT title, release, platform FROM events FINAL WHERE org_id = {org:UInt64} AND event_id = {id:String}",
                parameters={"org": org_id, "id": event_id},
            )
            .result_rows
        )
        if rows:
            return rows
        time.sleep(0.2)
    return []


def stored_title(org_id: int, event_id: str) -> str:
    rows = (
        _warehouse[0]
        .query(
            "SELECT title FROM events FINAL WHERE org_id = {org:UInt64} AND event_id = {id:String}",
            parameters={"org": org_id, "id": event_id},
        )
        .result_rows
    )
    return str(rows[0][0]) if rows else ""
