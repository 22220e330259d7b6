"""An envelope's items become log lines: an event-like item that is a JSON object on one line becomes its
line with its bytes as sent (no parse and write-out of a payload the ingest service parses next anyway), and
that line lands exactly as the line written from the parsed item; every other item goes the long way."""

from __future__ import annotations

import json
import time
import uuid
from datetime import UTC, datetime
from typing import Any

import orjson
import pytest
import sentry_sdk

from stacklens.ingest.decode import DecodeError
from stacklens.ingest.envelope import parse_envelope
from stacklens.ingest.envelope_lines import _line, envelope_lines
from stacklens.ingest.prepare import prepare_lines
from stacklens.ingest.prepared_rows import Attribution, BatchContext
from tests.stacklens.ingest.sdk_events import capture, sdk_client

KEY = "stacklens_app_" + "k" * 24
RECEIVED = datetime(2026, 11, 27, 3, 0, 0, 250000, tzinfo=UTC)


def _envelope(payload: bytes, header: dict[str, Any], kind: str = "event") -> bytes:
    item = json.dumps({"type": kind, "length": len(payload)}).encode()
    return b"\n".join([json.dumps(header).encode(), item, payload]) + b"\n"


def _rows(line: bytes) -> dict[str, list[Any]]:
    context = BatchContext(1, "batch", RECEIVED.timestamp(), None)
    prepared = prepare_lines([line], 1, context, lambda _key: Attribution(1, None, 1))
    assert not prepared.rejected, prepared.rejected
    return {table: [row[3] for row in rows] for table, rows in prepared.tables.items()}


@pytest.mark.parametrize("kind", ["event", "transaction"])
def test_an_event_like_item_becomes_its_line_as_sent_and_lands_alike(kind: str) -> None:
    event = _event() if kind == "event" else _transaction()
    raw = json.dumps(event, indent=None).encode()  # the SDK's own spacing: ", " and ": "
    lines = envelope_lines(
        parse_envelope(_envelope(raw, {"event_id": event["event_id"]}, kind)), KEY, RECEIVED
    )
    (line,) = lines.lines.split(b"\n")
    assert raw in line, "the payload's bytes as sent"
    long_way = _line(kind, KEY, "2026-11-27T03:00:00.250Z", orjson.loads(raw))
    assert orjson.loads(line) == orjson.loads(long_way)
    assert list(orjson.loads(line)) == ["v", "type", "app_key", "ts", "payload"]
    assert _rows(line) == _rows(long_way), "the same rows as the line written from the parsed item"
    assert lines.event_id == event["event_id"] and lines.written[kind] == 1


def test_items_that_are_not_one_line_objects_go_the_long_way() -> None:
    event = _event()
    pretty = json.dumps(event, indent=2).encode()  # line breaks between tokens: valid JSON, not one line
    (line,) = envelope_lines(
        parse_envelope(_envelope(pretty, {"event_id": event["event_id"]})), KEY, RECEIVED
    ).lines.split(b"\n")
    assert orjson.loads(line)["payload"] == event
    # No event id in the envelope header: the item is read for its own.
    unnamed = envelope_lines(parse_envelope(_envelope(json.dumps(event).encode(), {})), KEY, RECEIVED)
    assert unnamed.event_id == event["event_id"]
    with pytest.raises(DecodeError, match="event item is not a JSON object"):
        envelope_lines(parse_envelope(_envelope(b"[1, 2]", {"event_id": uuid.uuid4().hex})), KEY, RECEIVED)


def test_an_object_that_is_no_json_inside_is_refused_by_the_line_parser_alone() -> None:
    lines = envelope_lines(
        parse_envelope(_envelope(b'{"message": oops}', {"event_id": uuid.uuid4().hex})), KEY, RECEIVED
    )
    context = BatchContext(1, "batch", time.time(), None)
    prepared = prepare_lines(lines.lines.split(b"\n"), 1, context, lambda _key: Attribution(1, None, 1))
    assert [r["line"] for r in prepared.rejected] == [1]
    assert not any(prepared.tables.values())


def _event() -> dict[str, Any]:
    cart: dict[str, int] = {}
    return capture(lambda: cart["sku-1"], release="shop@2.0.0")


def _transaction() -> dict[str, Any]:
    with (
        sdk_client() as transport,
        sentry_sdk.start_transaction(name="/checkout", op="http.server"),
        sentry_sdk.start_span(op="db", name="SELECT 1"),
    ):
        pass
    return next(payload for kind, payload in transport.items if kind == "transaction")
