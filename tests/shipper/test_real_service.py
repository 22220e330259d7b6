"""The real shipper (a subprocess) against the real service (uvicorn, control store, embedded warehouse):
no batch poisons the shipper, every line the service refuses reaches the dead letters whole, and
`--resend-dead-letters` lands them once their cause is fixed."""

from __future__ import annotations

import json
import os
import signal
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from stacklens.control.db import session_scope
from stacklens.control.keys.lifecycle import regenerate_app_key
from stacklens.ingest.front_door import settle_front_doors
from stacklens.settings import Settings
from stacklens.warehouse.client import get_warehouse
from stacklens.warehouse.migrations import apply_migrations
from tests.api.live import serve
from tests.shipper.harness import Workspace, wait_until

DAY = 86_400.0


@pytest.fixture
def decade(settings: Settings) -> Settings:
    """Ten years of retention, so one file can hold events over more than 100 months."""
    wide = settings.model_copy(update={"retention_days": 3650})
    apply_migrations(wide, up_to=99)
    return wide


@pytest.fixture
def service(decade: Settings) -> Iterator[SimpleNamespace]:
    with serve(decade) as url:
        yield SimpleNamespace(url=url)


@pytest.fixture
def org(make_org, decade: Settings) -> dict[str, Any]:
    """An organization whose first app key was since regenerated: ``retired`` no longer works."""
    made = make_org()
    with session_scope(decade) as session:
        made["retired"], made["app_key"] = made["app_key"], regenerate_app_key(session, made["project_id"])
    return made


@pytest.fixture
def ws(service: SimpleNamespace, org: dict[str, Any]) -> Iterator[Workspace]:
    workspace = Workspace(service, apiKey=org["api_key"], appKey=org["app_key"], timeout="30s")
    yield workspace
    workspace.cleanup()


def event_line(
    app_key: object, message: str, when: float, event_id: str | None = None, **extra: Any
) -> bytes:
    payload = {"event_id": event_id or uuid.uuid4().hex, "timestamp": when, "message": message, **extra}
    return json.dumps({"v": 1, "type": "event", "app_key": app_key, "payload": payload}).encode() + b"\n"


def transaction_line(app_key: object, name: str, now: float, months: int) -> bytes:
    """A transaction whose spans carry their own times, a month apart over ``months`` months."""
    payload = {
        "event_id": uuid.uuid4().hex,
        "transaction": name,
        "start_timestamp": now - 1,
        "timestamp": now,
        "contexts": {"trace": {"op": "http.server", "trace_id": "c" * 32, "span_id": "d" * 16}},
        "spans": [
            {
                "span_id": f"{i:016x}",
                "op": "db",
                "start_timestamp": now - i * 31 * DAY,
                "timestamp": now - i * 31 * DAY,
            }
            for i in range(months)
        ],
    }
    return (
        json.dumps({"v": 1, "type": "transaction", "app_key": app_key, "payload": payload}).encode() + b"\n"
    )


def write(path: Path, lines: list[bytes]) -> None:
    with open(path, "ab") as fh:
        fh.write(b"".join(lines))


def landed_messages(settings: Settings, org_id: object) -> dict[str, int]:
    assert settle_front_doors()  # the server runs in this process; read after what it answered
    rows = (
        get_warehouse(settings)
        .query(
            "SELECT JSONExtractString(payload, 'message'), count() FROM events WHERE org_id = {org:UInt64} "
            "GROUP BY 1",
            parameters={"org": org_id},
        )
        .result_rows
    )
    return dict(rows)


def count(settings: Settings, table: str, org_id: object) -> int:
    assert settle_front_doors()
    return (
        get_warehouse(settings)
        .query(f"SELECT count() FROM {table} WHERE org_id = {{org:UInt64}}", parameters={"org": org_id})  # noqa: S608 - the tests' names
        .result_rows[0][0]
    )


def dead_letters(ws: Workspace) -> list[dict[str, Any]]:
    path = ws.logs / "deadletter.ndjson"
    return [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []


def stop(proc: Any) -> str:
    proc.signal(signal.SIGTERM)
    assert proc.wait(30) == 0, proc.output()[-3000:]
    return proc.output()


def test_a_file_over_more_than_100_months_is_delivered(
    ws: Workspace, decade: Settings, org: dict[str, Any]
) -> None:
    now = time.time()
    lines = [event_line(org["app_key"], f"month {i}", now - i * 31 * DAY) for i in range(110)]
    lines.append(transaction_line(org["app_key"], "/checkout", now, 110))
    write(ws.day(), lines)
    proc = ws.start()
    wait_until(lambda: count(decade, "spans", org["org_id"]) == 110, 90, "every span in the warehouse")
    output = stop(proc)
    assert len(landed_messages(decade, org["org_id"])) == 110
    assert count(decade, "events", org["org_id"]) == 110 and count(decade, "transactions", org["org_id"]) == 1
    assert "parked" not in output and "Retry attempt" not in output, output[-3000:]
    assert dead_letters(ws) == []


def test_a_line_with_a_retired_app_key_is_dead_lettered_and_logged(
    ws: Workspace, decade: Settings, org: dict[str, Any]
) -> None:
    now = time.time()
    write(
        ws.day(),
        [
            event_line(org["app_key"], "before", now),
            event_line(org["retired"], "written before the rotation", now),
            event_line(org["app_key"], "after", now),
        ],
    )
    proc = ws.start()
    wait_until(lambda: bool(dead_letters(ws)), 60, "the dead letter")
    output = stop(proc)
    assert landed_messages(decade, org["org_id"]) == {"before": 1, "after": 1}
    (letter,) = dead_letters(ws)
    assert letter["reason"].startswith("rejected by the service: Application Not Found")
    assert letter["line"].startswith('{"v": 1, "type": "event", "app_key": "' + str(org["retired"]))
    assert json.loads(letter["line"])["payload"]["message"] == "written before the rotation"  # kept whole
    assert letter["offset"] > 0 and letter["length"] > 0
    assert "Application Not Found: 1 events carry an app key the service no longer knows" in output


def test_a_batch_mixing_every_bad_line_with_good_ones(
    ws: Workspace, decade: Settings, org: dict[str, Any]
) -> None:
    """Every good line lands exactly once, every bad line is in the dead letters with its reason, and
    delivery goes on with what is written afterwards."""
    now, key = time.time(), org["app_key"]
    good = [
        b"\xef\xbb\xbf" + event_line(key, "good: after a byte order mark", now),
        event_line(key, "good: plain", now),
        event_line(key, "good: older than the retention", now - 4000 * DAY),
        event_line(key, "good: a clock a day ahead", now + DAY),
        event_line(key, "good: nil id one", now, "0" * 32),
        event_line(key, "good: nil id two", now, "0" * 32),
        event_line(key, "good: malformed id", now, "xyz"),
        event_line(key, "good: numbers", now, extra={"huge": 1e308, "big": 2**70}).replace(
            b"1e+308", b"1e400"
        ),
        *[event_line(key, f"good: month {i}", now - i * 31 * DAY) for i in range(105)],
        transaction_line(key, "/spread", now, 105),
    ]
    bad = {
        "retired app key": event_line(org["retired"], "bad: retired key", now),
        "version as text": event_line(key, "bad: v text", now).replace(b'"v": 1', b'"v": "1"'),
        "payload not an object": b'{"v": 1, "type": "event", "payload": "a string"}\n',
        "type not a name": b'{"v": 1, "type": 5, "payload": {}}\n',
        "not JSON": b"{this is not json\n",
    }
    others = [line for name, line in bad.items() if name != "retired app key"]
    write(ws.day(), [*good[:4], bad["retired app key"], *good[4:8], *others, *good[8:]])
    proc = ws.start()
    goods = {json.loads(x.removeprefix(b"\xef\xbb\xbf"))["payload"].get("message") for x in good} - {None}
    wait_until(lambda: set(landed_messages(decade, org["org_id"])) >= goods, 120, "every good line")
    wait_until(lambda: count(decade, "spans", org["org_id"]) == 105, 60, "every span")
    wait_until(lambda: len(dead_letters(ws)) == len(bad), 30, "every bad line in the dead letters")
    # Delivery goes on.
    write(ws.day(), [event_line(key, "good: written later", now)])
    wait_until(lambda: "good: written later" in landed_messages(decade, org["org_id"]), 60, "the later line")
    output = stop(proc)
    landed = landed_messages(decade, org["org_id"])
    assert set(landed) == goods | {"good: written later"}, set(landed) ^ (goods | {"good: written later"})
    assert all(n == 1 for n in landed.values()), {m: n for m, n in landed.items() if n != 1}
    letters = {letter["line"]: letter["reason"] for letter in dead_letters(ws)}
    assert len(letters) == len(bad)
    reasons = {name: letters[line.removesuffix(b"\n").decode()] for name, line in bad.items()}
    assert "Application Not Found" in reasons["retired app key"]
    assert reasons["version as text"].endswith('`v` must be the number 1, not the text "1"')
    assert "`payload` must be a JSON object" in reasons["payload not an object"]
    assert "`type` must be" in reasons["type not a name"]
    assert reasons["not JSON"] == "not valid JSON"
    assert "Application Not Found" in output and "parked" not in output, output[-3000:]
    # Stored exactly: the numbers as written, the old event under its receive time with the original kept.
    payloads = {
        json.loads(p)["message"]: json.loads(p)
        for (p,) in get_warehouse(decade)
        .query("SELECT payload FROM events WHERE org_id = {org:UInt64}", parameters={"org": org["org_id"]})
        .result_rows
    }
    assert payloads["good: numbers"]["extra"] == {"huge": "1e400", "big": str(2**70)}
    assert payloads["good: older than the retention"]["errors"][0]["type"] == "past_timestamp"
    assert os.path.getsize(ws.logs / "deadletter.ndjson") > 0


@pytest.fixture
def ws_pairs(service: SimpleNamespace, org: dict[str, Any]) -> Iterator[Workspace]:
    """A shipper sending two lines a batch, so a batch can hold nothing but refused lines."""
    workspace = Workspace(service, apiKey=org["api_key"], appKey=org["app_key"], timeout="30s", batchSize=2)
    yield workspace
    workspace.cleanup()


def test_a_batch_refused_for_mixed_reasons_is_dead_lettered_and_the_file_goes_on(
    ws_pairs: Workspace, decade: Settings, org: dict[str, Any]
) -> None:
    """A batch of only refused lines — one with a retired app key, one the service cannot read — used to be
    answered a whole-batch 404 that the shipper waited on for ever; now each line gets its own answer, both
    reach the dead letters with their reason, and the lines after them land."""
    now, key = time.time(), org["app_key"]
    retired = event_line(org["retired"], "bad: retired key", now)
    garbage = event_line(key, "bad: v text", now).replace(b'"v": 1', b'"v": "1"')
    good = [event_line(key, f"good {i}", now) for i in range(3)]
    write(ws_pairs.day(), [retired, garbage, *good])
    proc = ws_pairs.start()
    wait_until(
        lambda: set(landed_messages(decade, org["org_id"])) == {"good 0", "good 1", "good 2"},
        60,
        "the good lines after the refused batch",
    )
    wait_until(lambda: len(dead_letters(ws_pairs)) == 2, 30, "both refused lines in the dead letters")
    output = stop(proc)
    letters = {letter["line"]: letter["reason"] for letter in dead_letters(ws_pairs)}
    assert "Application Not Found" in letters[retired.removesuffix(b"\n").decode()]
    assert letters[garbage.removesuffix(b"\n").decode()].endswith(
        '`v` must be the number 1, not the text "1"'
    )
    assert "fix appKey" not in output, output[-3000:]


def test_dead_letters_outlive_their_file_and_land_once_after_the_app_key_is_fixed(
    ws: Workspace, decade: Settings, org: dict[str, Any]
) -> None:
    """The shipper still had the app key from before a regeneration: the lines relying on it are refused
    (those carrying the new key are taken), the file is rotated away, the operator fixes ``appKey`` and
    resends; a resend killed after the service answered is finished by the next run, each line landing
    once."""
    ws.settings.update(appKey=org["retired"], shutdownGrace="20s")  # a busy disk must not fail the stop
    ws.write_config()
    now = time.time()
    relying = [
        event_line(org["app_key"], f"relying {i}", now).replace(
            f'"app_key": "{org["app_key"]}", '.encode(), b""
        )
        for i in range(4)
    ]
    assert all(b"app_key" not in line for line in relying)
    own = [event_line(org["app_key"], f"own {i}", now) for i in range(4)]
    write(ws.day(), [line for pair in zip(own, relying, strict=True) for line in pair])
    proc = ws.start()
    wait_until(lambda: len(dead_letters(ws)) == 4, 60, "the refused lines in the dead letters")
    stop(proc)
    assert landed_messages(decade, org["org_id"]) == {f"own {i}": 1 for i in range(4)}
    ws.day().unlink()  # rotated away
    assert {letter["line"].encode() + b"\n" for letter in dead_letters(ws)} == set(relying)

    ws.settings.update(appKey=org["app_key"], batchSize=2)
    ws.write_config()
    killed = ws.cli("--resend-dead-letters", fault="after_send:1")
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    finished = ws.cli("--resend-dead-letters")
    assert finished.returncode == 0, finished.stderr
    assert "Finishing an interrupted resend: 1 batches" in finished.stderr
    assert dead_letters(ws) == []
    everything = {f"own {i}": 1 for i in range(4)} | {f"relying {i}": 1 for i in range(4)}
    assert landed_messages(decade, org["org_id"]) == everything
    again = ws.cli("--resend-dead-letters")
    assert again.returncode == 0 and "No dead letters to resend" in again.stderr, again.stderr
    assert landed_messages(decade, org["org_id"]) == everything
