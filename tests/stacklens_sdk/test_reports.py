"""The one client-report writer of the SDK (used by the file transport and the tunnel)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from sentry_sdk.envelope import Item, PayloadRef

from stacklens_sdk.logfile import LogWriter
from stacklens_sdk.reports import REASON_TOO_LARGE, REASON_WRITE_FAILED, count_lost, write_client_report
from tests.stacklens_sdk.helpers import make_app_key, read_lines


def _item(kind: str, payload: dict[str, object]) -> Item:
    return Item(payload=PayloadRef(json=payload), type=kind)


def test_counts_follow_sentry_and_the_report_is_one_line(tmp_path: Path) -> None:
    lost: Counter[tuple[str, str]] = Counter()
    count_lost(lost, _item("event", {"message": "x"}), REASON_TOO_LARGE)
    transaction = {"type": "transaction", "transaction": "/cart", "spans": [{"op": "db"}, {"op": "http"}]}
    count_lost(lost, _item("transaction", transaction), REASON_WRITE_FAILED)
    count_lost(lost, _item("event", {"message": "y"}), REASON_TOO_LARGE)
    # A dropped transaction also loses its spans and its root span.
    assert lost == {
        ("error", "buffer_overflow"): 2,
        ("transaction", "send_error"): 1,
        ("span", "send_error"): 3,
    }

    key = make_app_key()
    writer = LogWriter(str(tmp_path))
    assert write_client_report(writer, key, lost)
    [line] = read_lines(tmp_path)
    assert line["type"] == "client_report" and line["app_key"] == key
    assert sorted(line["payload"]["discarded_events"], key=lambda d: (d["category"], d["reason"])) == [
        {"reason": "buffer_overflow", "category": "error", "quantity": 2},
        {"reason": "send_error", "category": "span", "quantity": 3},
        {"reason": "send_error", "category": "transaction", "quantity": 1},
    ]


def test_nothing_lost_writes_nothing(tmp_path: Path) -> None:
    assert write_client_report(LogWriter(str(tmp_path)), make_app_key(), {})
    assert read_lines(tmp_path) == []


def test_a_report_that_cannot_be_written_is_left_to_the_caller(tmp_path: Path) -> None:
    # A line limit below the report's size: the writer refuses it, and the caller keeps its counts.
    writer = LogWriter(str(tmp_path), max_line_bytes=64)
    assert not write_client_report(writer, make_app_key(), {("error", "buffer_overflow"): 1})
    assert read_lines(tmp_path) == []
