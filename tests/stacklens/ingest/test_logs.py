"""One log record → its `logs` row: severity by number or word, ids, service/release/environment from the
fields or the attributes Sentry and OpenTelemetry use, scrubbing, trimming, times replaced as events' are,
and a key that is the same for the same record."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

import orjson
import pytest

from stacklens.ingest.fields import Origin
from stacklens.ingest.logs import (
    SENT_TIME_ATTRIBUTE,
    TRIMMED_ATTRIBUTE,
    BadLog,
    level_range,
    log_row,
    log_window,
    severity_of,
)

NOW = time.time()
WINDOW = log_window(NOW, 30)


def _row(payload: dict[str, Any], service: str | None = None) -> dict[str, Any]:
    origin = Origin(1, 7, service, "batch", NOW)
    return log_row(payload, orjson.dumps(payload), b"", origin, WINDOW)


def test_severity_from_the_number_the_attribute_or_the_word() -> None:
    assert [severity_of(n) for n in (0, 1, 5, 9, 12, 13, 17, 21, 24, 25)] == [
        "",
        "trace",
        "debug",
        "info",
        "info",
        "warn",
        "error",
        "fatal",
        "fatal",
        "",
    ]
    assert level_range("warn") == (13, 16)
    assert _row({"severity_number": 18, "severity_text": "E"})[("severity")] == "error"
    sentry = _row(
        {"level": "warn", "attributes": {"sentry.severity_number": {"value": 14, "type": "integer"}}}
    )
    assert (sentry["severity"], sentry["severity_number"], sentry["severity_text"]) == ("warn", 14, "warn")
    python = _row({"level": "WARNING"})
    assert (python["severity"], python["severity_number"]) == ("warn", 13)
    unknown = _row({"level": "chatty"})
    assert (unknown["severity"], unknown["severity_number"]) == ("", 0)
    with pytest.raises(BadLog, match="severity_number"):
        _row({"severity_number": 25})
    with pytest.raises(BadLog, match="level"):
        _row({"level": 3})


def test_ids_attributes_and_where_the_record_comes_from() -> None:
    row = _row(
        {
            "timestamp": NOW,
            "body": "hello",
            "trace_id": "5B8EFFF798038103D269B633813FC60C",
            "span_id": "0000000000000000",
            "attributes": {
                "sentry.release": {"value": "shop@1.0", "type": "string"},
                "sentry.environment": {"value": "prod", "type": "string"},
                "retries": {"value": 3, "type": "integer"},
                "ok": True,
                "tags": ["a", "b"],
                "service.name": "carts",
            },
        }
    )
    assert row["trace_id"] == "5b8efff798038103d269b633813fc60c" and row["span_id"] == ""
    assert (row["release"], row["environment"], row["service"]) == ("shop@1.0", "prod", "carts")
    assert row["attributes"]["retries"] == "3" and row["attributes"]["ok"] == "true"
    assert row["attributes"]["tags"] == '["a","b"]'
    assert _row({"service": "x"}, service="per-key")["service"] == "per-key", "a per-service key wins"
    with pytest.raises(BadLog, match="trace_id"):
        _row({"trace_id": "abc"})
    with pytest.raises(BadLog, match="span_id"):
        _row({"span_id": 12})
    with pytest.raises(BadLog, match="attributes"):
        _row({"attributes": ["x"]})


def test_secrets_are_scrubbed_and_long_values_cut() -> None:
    row = _row(
        {
            "body": "paid with 4242 4242 4242 4242 via https://u:hunter2@pay.example/x " + "y" * 20_000,
            "attributes": {"user.password": "s3cret", "note": "z" * 9_000, "count": 2},
        }
    )
    assert "4242" not in row["body"] and "hunter2" not in row["body"] and "[FILTERED]" in row["body"]
    assert 16_000 < len(row["body"]) <= 16 * 1024, "cut to 16 KiB as sent, then scrubbed"
    assert row["attributes"]["user.password"] == "[FILTERED]"
    assert len(row["attributes"]["note"]) == 8192
    assert row["attributes"][TRIMMED_ATTRIBUTE] == "attributes.note,body"


def test_times_are_kept_replaced_or_taken_from_the_observed_time() -> None:
    kept = _row({"timestamp": NOW - 3600})
    stored = datetime.strptime(kept["timestamp"], "%Y-%m-%d %H:%M:%S.%f").replace(tzinfo=UTC).timestamp()
    assert abs(stored - (NOW - 3600)) < 1e-5
    assert SENT_TIME_ATTRIBUTE not in kept["attributes"]
    for sent in (NOW - 40 * 86400, NOW + 3600, "not a time"):
        row = _row({"timestamp": sent})
        assert row["attributes"][SENT_TIME_ATTRIBUTE] == str(sent)[:64], sent
        assert row["timestamp"][:16] == time.strftime("%Y-%m-%d %H:%M", time.gmtime(NOW)), sent
    observed = _row({"observed_timestamp": NOW - 60})
    assert observed["timestamp"] == observed["observed"] and SENT_TIME_ATTRIBUTE not in observed["attributes"]


def test_the_key_is_the_same_for_the_same_record_only() -> None:
    record = {"timestamp": NOW, "body": "a", "attributes": {"x": 1}}
    assert _row(record)["dedup_key"] == _row(dict(reversed(list(record.items()))))["dedup_key"]
    assert _row(record)["dedup_key"] != _row({**record, "body": "b"})["dedup_key"]
