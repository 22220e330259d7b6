"""The kept time window and the note a replaced time leaves in the payload (Relay's rules)."""

from __future__ import annotations

from typing import Any

from stacklens.ingest.clock import note_replaced_time, time_shift, time_window
from stacklens.ingest.fields import Origin, timestamp_of
from stacklens.ingest.timeparse import format_ms
from stacklens.ingest.transactions import spans_rows, transaction_row

RECEIVED = 1_795_000_000.0
DAY = 86_400.0


def origin(line_ts: str | None = None, retention_days: int = 90) -> Origin:
    return Origin(1, 2, None, "batch", RECEIVED, line_ts, *time_window(RECEIVED, retention_days))


def test_the_window_is_the_retention_less_a_day_back_and_a_minute_ahead() -> None:
    earliest, latest = time_window(RECEIVED, 90)
    assert (RECEIVED - earliest, latest - RECEIVED) == (89 * DAY, 60.0)
    where = origin()
    for inside in (RECEIVED - 89 * DAY + 1, RECEIVED - 35 * DAY, RECEIVED + 59):
        assert timestamp_of(inside, where) == inside
    for outside in (RECEIVED - 89 * DAY - 1, RECEIVED - 400 * DAY, RECEIVED + 61, "not a time", None):
        assert timestamp_of(outside, where) == RECEIVED


def test_the_note_names_the_kind_and_keeps_the_original() -> None:
    cases: list[tuple[Any, str | None]] = [
        (RECEIVED - 100 * DAY, "past_timestamp"),
        ("2000-01-02T00:00:00Z", "past_timestamp"),
        (RECEIVED + 3600, "future_timestamp"),
        ("yesterday", "invalid_timestamp"),
        (RECEIVED - DAY, None),
    ]
    for sent, kind in cases:
        payload: dict[str, Any] = {"timestamp": sent, "errors": [{"type": "sdk"}]}
        assert note_replaced_time(payload, "event", origin()) is (kind is not None)
        note = payload["errors"][-1]
        if kind is None:
            assert payload["errors"] == [{"type": "sdk"}]
        else:
            assert note == {
                "type": kind,
                "name": "timestamp",
                "value": sent,
                "server_time": format_ms(RECEIVED),
            }
            assert payload["timestamp"] == sent and payload["errors"][0] == {"type": "sdk"}
    assert note_replaced_time({}, "event", origin()) is False, "no time at all: nothing to note"


def test_a_replaced_transaction_moves_its_spans_and_keeps_their_offsets() -> None:
    start = RECEIVED - 300 * DAY
    payload = {
        "event_id": "a" * 32,
        "start_timestamp": start,
        "timestamp": start + 2,
        "contexts": {"trace": {"op": "http.server", "trace_id": "t" * 32}},
        "spans": [
            {"span_id": "1", "start_timestamp": start + 0.5, "timestamp": start + 1.5},
            {"span_id": "2", "start_timestamp": start - 900 * DAY, "timestamp": start - 900 * DAY + 0.25},
        ],
    }
    where = origin()
    assert time_shift(payload, "transaction", where) == RECEIVED - start
    row = transaction_row(payload, where, b"{}", "{}")
    assert (row["timestamp"], row["duration_ms"]) == (format_ms(RECEIVED), 2000.0)
    spans = spans_rows(payload, row, where)
    assert [s["timestamp"] for s in spans] == [format_ms(RECEIVED + 0.5), format_ms(RECEIVED)]
    assert [s["duration_ms"] for s in spans] == [1000.0, 250.0]
