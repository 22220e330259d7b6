"""``stacklens_sdk.init`` and the file transport through sentry-sdk's public API."""

from __future__ import annotations

import json
import stat
import subprocess
import sys
from pathlib import Path

import pytest

import stacklens_sdk
from stacklens_sdk import ConfigurationError
from tests.stacklens_sdk.helpers import make_app_key, read_lines


@pytest.mark.parametrize(
    ("key", "fix"),
    [
        ("stacklens_api_" + "a" * 32, "pass the project's application key (stacklens_app_…) instead"),
        ("sk_live_123", "must start with 'stacklens_app_'"),
        ("stacklens_app_short", "copy it again from the project settings page"),
        (" stacklens_app_" + "a" * 24, "whitespace"),
        ("stacklens_app_Bad_" + "a" * 24, "per-service key"),
        ("", "app_key is required"),
    ],
)
def test_wrong_keys_are_refused_with_the_fix(tmp_path: Path, key: str, fix: str) -> None:
    with pytest.raises(ConfigurationError, match=None) as err:
        stacklens_sdk.init(app_key=key, storage_path=tmp_path)
    assert fix in str(err.value)


def test_storage_path_created_restrictive_and_unwritable_path_refused(tmp_path: Path) -> None:
    storage = tmp_path / "a" / "logs"
    stacklens_sdk.init(app_key=make_app_key(), storage_path=storage)
    assert stat.S_IMODE(storage.stat().st_mode) == 0o770
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(
        ConfigurationError, match=r"cannot be created .*create it and give the application's user"
    ):
        stacklens_sdk.init(app_key=make_app_key(), storage_path=blocker / "logs")
    with pytest.raises(ConfigurationError, match="is not a directory"):
        stacklens_sdk.init(app_key=make_app_key(), storage_path=blocker)
    with pytest.raises(ConfigurationError, match="remove dsn"):
        stacklens_sdk.init(
            app_key=make_app_key(), storage_path=storage, dsn="https://k@o1.ingest.sentry.io/1"
        )


def test_events_transactions_and_per_service_key(tmp_path: Path) -> None:
    key = make_app_key("worker")
    stacklens_sdk.init(
        app_key=key, storage_path=tmp_path, release="w@1", environment="prod", traces_sample_rate=1.0
    )
    stacklens_sdk.set_tag("queue", "emails")
    stacklens_sdk.set_context("job", {"id": 7})
    stacklens_sdk.add_breadcrumb(category="navigation", message="job picked up")
    try:
        {}["missing"]
    except KeyError as exc:
        stacklens_sdk.capture_exception(exc)
    with (
        stacklens_sdk.start_transaction(name="send_email", op="queue.task"),
        stacklens_sdk.start_span(op="db.query", name="SELECT 1"),
    ):
        pass
    stacklens_sdk.flush()
    lines = read_lines(tmp_path)
    assert [line["type"] for line in lines] == ["event", "transaction"]
    assert {line["app_key"] for line in lines} == {key}
    event = lines[0]["payload"]
    assert event["exception"]["values"][0]["type"] == "KeyError"
    assert event["tags"] == {"queue": "emails", "service": "worker"}
    assert event["contexts"]["job"] == {"id": 7}
    assert event["release"] == "w@1" and event["environment"] == "prod" and event["server_name"]
    assert event["breadcrumbs"]["values"][0]["category"] == "navigation"
    assert "user" not in event, "no user unless the application identifies one"
    tx = lines[1]["payload"]
    assert tx["transaction"] == "send_email" and [s["op"] for s in tx["spans"]] == ["db.query"]


def test_oversized_line_is_dropped_and_counted_in_a_client_report(tmp_path: Path) -> None:
    stacklens_sdk.init(
        app_key=make_app_key(), storage_path=tmp_path, max_line_bytes=64 * 1024, max_value_length=300_000
    )
    stacklens_sdk.capture_message("small")
    stacklens_sdk.set_extra("blob", "x" * 200_000)  # over the 64 kB limit
    stacklens_sdk.capture_message("huge")
    stacklens_sdk.flush()
    lines = read_lines(tmp_path)
    assert [line["type"] for line in lines] == ["event", "client_report"]
    assert lines[0]["payload"]["message"] == "small"
    assert lines[1]["payload"]["discarded_events"] == [
        {"reason": "buffer_overflow", "category": "error", "quantity": 1}
    ]
    assert all(len(raw) <= 64 * 1024 for raw in next(tmp_path.glob("*.log")).read_bytes().splitlines())


NO_NETWORK_SCRIPT = """
import json, socket, sys
attempts = []
def refuse(self, address, *args):
    attempts.append(repr(address))
    raise OSError("network disabled in this test")
socket.socket.connect = refuse
socket.socket.connect_ex = refuse
socket.socket.sendto = lambda self, data, *a: attempts.append(repr(a)) or 0
import stacklens_sdk, logging
stacklens_sdk.init(app_key=sys.argv[2], storage_path=sys.argv[1], release="r1", traces_sample_rate=1.0)
logging.getLogger("x").error("an error log becomes an event")
try:
    1 / 0
except ZeroDivisionError as exc:
    stacklens_sdk.capture_exception(exc)
with stacklens_sdk.start_transaction(name="job"):
    pass
stacklens_sdk.flush()
stacklens_sdk.close()
print(json.dumps(attempts))
"""


def test_the_sdk_opens_no_network_connection(tmp_path: Path) -> None:
    key = make_app_key()
    proc = subprocess.run(
        [sys.executable, "-c", NO_NETWORK_SCRIPT, str(tmp_path), key],
        capture_output=True,
        text=True,
        timeout=60,
        env={
            "SENTRY_DSN": "https://public@o0.ingest.sentry.io/1",
            "SENTRY_SPOTLIGHT": "1",
            "PATH": "/usr/bin:/bin",
        },
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.splitlines()[-1]) == []
    types = [line["type"] for line in read_lines(tmp_path)]
    assert types.count("event") == 2 and "transaction" in types
