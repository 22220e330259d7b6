"""Issue #13 through a real uvicorn server, the real control store and the real embedded warehouse: an
accepted event is never lost, and no batch fails because of the values in it."""

from __future__ import annotations

import gzip
import json
import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from clickhouse_connect.driver.exceptions import OperationalError

from stacklens.ingest import writer
from stacklens.ingest.front_door import settle_front_doors
from stacklens.ingest.jsondepth import MAX_JSON_DEPTH
from stacklens.ingest.timeparse import format_ms
from stacklens.settings import Settings
from stacklens.warehouse.client import get_warehouse
from stacklens.warehouse.migrations import apply_migrations
from tests.api.live import serve

DAY = 86_400.0


@pytest.fixture
def decade(settings: Settings) -> Settings:
    """Ten years of retention: enough months for one batch to span more than the engine's 100 partitions."""
    wide = settings.model_copy(update={"retention_days": 3650})
    apply_migrations(wide, up_to=99)
    return wide


@pytest.fixture
def server(decade: Settings) -> Iterator[str]:
    with serve(decade) as url:
        yield url


@pytest.fixture
def default_server(settings: Settings) -> Iterator[str]:
    """The default 90-day retention, every layer (the issue figures read the marts' live counters)."""
    apply_migrations(settings)
    with serve(settings) as url:
        yield url


def line(payload: dict[str, Any], app_key: object, item_type: str = "event") -> bytes:
    return json.dumps({"v": 1, "type": item_type, "app_key": app_key, "payload": payload}).encode()


def event(when: float, event_id: str | None = None, **extra: Any) -> dict[str, Any]:
    payload = {"event_id": event_id or uuid.uuid4().hex, "timestamp": when, "level": "error"}
    return {**payload, "message": f"boom at {when}", **extra}


def months_apart_transaction(now: float, months: int) -> dict[str, Any]:
    """A transaction now whose spans carry their own times, one a month back for ``months`` months."""
    return {
        "event_id": uuid.uuid4().hex,
        "type": "transaction",
        "transaction": "/checkout",
        "start_timestamp": now - 1,
        "timestamp": now,
        "contexts": {"trace": {"op": "http.server", "trace_id": "a" * 32, "span_id": "b" * 16}},
        "spans": [
            {
                "span_id": f"{i:016x}",
                "op": "db",
                "description": f"SELECT {i}",
                "start_timestamp": now - i * 31 * DAY,
                "timestamp": now - i * 31 * DAY + 0.01,
            }
            for i in range(months)
        ],
    }


def post(base: str, api_key: object, body: bytes, **headers: str) -> httpx.Response:
    return httpx.post(
        base + "/api/ingest",
        content=body,
        headers={"Authorization": f"Bearer {api_key}", **headers},
        timeout=120,
    )


def scalar(settings: Settings, sql: str, org_id: object) -> Any:
    return get_warehouse(settings).query(sql, parameters={"org": org_id}).result_rows[0][0]


def test_a_batch_over_more_than_100_months_lands_whole(server: str, decade: Settings, make_org) -> None:
    org = make_org()
    now = time.time()
    events = [line(event(now - i * 31 * DAY), org["app_key"]) for i in range(110)]
    body = b"\n".join([*events, line(months_apart_transaction(now, 110), org["app_key"], "transaction")])
    answer = post(server, org["api_key"], body, **{"Idempotency-Key": "many-months"})
    assert answer.status_code == 200, answer.text
    assert (answer.json()["accepted"], answer.json()["rejected"]) == (111, [])
    months = "SELECT uniqExact(toYYYYMM(timestamp)) FROM {t} WHERE org_id = {{org:UInt64}}"
    assert scalar(decade, months.format(t="events"), org["org_id"]) > 100
    assert scalar(decade, months.format(t="spans"), org["org_id"]) > 100
    assert scalar(decade, "SELECT count() FROM events WHERE org_id = {org:UInt64}", org["org_id"]) == 110
    assert scalar(decade, "SELECT count() FROM spans WHERE org_id = {org:UInt64}", org["org_id"]) == 110


@pytest.mark.parametrize("fail_on", ["spans", "transactions", "events"])
def test_a_drain_that_fails_half_way_lands_exactly_what_is_missing(
    server: str, decade: Settings, make_org, monkeypatch: pytest.MonkeyPatch, fail_on: str
) -> None:
    """The engine fails one insert half-way through a drain (after other partitions and tables landed): the
    request is answered 200 (its rows are in the front door's spool), the drain is tried again and completes
    the batch with no row twice and every span of every transaction in, and a resend under the same
    Idempotency-Key answers the first figures and lands nothing."""
    org = make_org()
    now = time.time()
    transactions = [months_apart_transaction(now - k * 40 * DAY, 6) for k in range(3)]
    lines = [line(t, org["app_key"], "transaction") for t in transactions]
    lines += [line(event(now - i * 31 * DAY), org["app_key"]) for i in range(6)]
    body = b"\n".join(lines)
    real_insert = writer.insert_encoded
    calls = {"n": 0}

    def flaky(client: Any, table: str, columns: list[str], rows: list[bytes], token: str) -> None:
        if table == fail_on:
            calls["n"] += 1
            if calls["n"] == 2:  # the second partition of that table: the first one is already in
                raise OperationalError("the engine refused the insert")
        real_insert(client, table, columns, rows, token)

    monkeypatch.setattr(writer, "insert_encoded", flaky)
    first = post(server, org["api_key"], body, **{"Idempotency-Key": f"flaky-{fail_on}"})
    assert first.status_code == 200, first.text
    assert (first.json()["accepted"], first.json()["duplicates"]) == (9, 0)
    assert settle_front_doors(timeout=30)
    assert (
        calls["n"] >= 3
    )  # failed once, then the whole drain again: its landed blocks skipped by their tokens
    monkeypatch.setattr(writer, "insert_encoded", real_insert)
    org_id = org["org_id"]
    assert scalar(decade, "SELECT count() FROM transactions WHERE org_id = {org:UInt64}", org_id) == 3
    assert scalar(decade, "SELECT count() FROM events WHERE org_id = {org:UInt64}", org_id) == 6
    assert scalar(decade, "SELECT count() FROM spans WHERE org_id = {org:UInt64}", org_id) == 18
    per_transaction = (
        get_warehouse(decade)
        .query(
            "SELECT transaction_event_id, count() FROM spans WHERE org_id = {org:UInt64} "
            "GROUP BY transaction_event_id",
            parameters={"org": org_id},
        )
        .result_rows
    )
    assert sorted(n for _, n in per_transaction) == [6, 6, 6]
    # The first answer is the batch's record: a resend replays it and lands nothing.
    again = post(server, org["api_key"], body, **{"Idempotency-Key": f"flaky-{fail_on}"})
    assert again.json() == first.json()
    assert scalar(decade, "SELECT count() FROM spans WHERE org_id = {org:UInt64}", org_id) == 18


def stored(settings: Settings, org_id: object) -> dict[str, tuple[str, dict[str, Any]]]:
    rows = (
        get_warehouse(settings)
        .query(
            "SELECT replaceAll(toString(event_id), '-', ''), toString(timestamp), payload FROM events "
            "WHERE org_id = {org:UInt64}",
            parameters={"org": org_id},
        )
        .result_rows
    )
    return {event_id: (when, json.loads(payload)) for event_id, when, payload in rows}


def test_times_the_retention_would_expire_or_in_the_future_are_stored_under_the_receive_time(
    default_server: str, settings: Settings, make_org
) -> None:
    org = make_org()
    now = time.time()
    sent = {
        "old": now - 200 * DAY,  # past the 90-day retention: the TTL would delete it at once
        "expiring": now - 89.5 * DAY,  # within a day of it
        "future": now + 3600,  # a clock an hour ahead
        "kept": now - 35 * DAY,  # inside the window: kept as sent (the demo's backfill)
        "drift": now + 30,  # within a minute: ordinary drift, kept
    }
    ids = {name: uuid.uuid4().hex for name in sent}
    # One message, so one issue: its figures must count every one of the five.
    body = b"\n".join(
        line(event(when, ids[name], message="clock trouble"), org["app_key"]) for name, when in sent.items()
    )
    answer = post(default_server, org["api_key"], body)
    assert answer.status_code == 200 and answer.json()["accepted"] == 5, answer.text
    received = time.time()
    rows = stored(settings, org["org_id"])
    for name in ("old", "expiring", "future"):
        when, payload = rows[ids[name]]
        assert now - 5 <= _epoch(when) <= received + 5, (name, when)
        note = next(e for e in payload["errors"] if e["name"] == "timestamp")
        assert note["type"] == ("future_timestamp" if name == "future" else "past_timestamp")
        assert note["value"] == sent[name] and payload["timestamp"] == sent[name], "the original is kept"
    for name in ("kept", "drift"):
        when, payload = rows[ids[name]]
        assert when == format_ms(sent[name]), name
        assert "errors" not in payload
    # The event page's source answers for every one of them, and a resend is a duplicate.
    for event_id in ids.values():
        shown = httpx.get(
            f"{default_server}/api/events/{event_id}",
            headers={"Authorization": f"Bearer {org['api_key']}"},
            timeout=30,
        )
        assert shown.status_code == 200, shown.text
    again = post(default_server, org["api_key"], body)
    assert (again.json()["accepted"], again.json()["duplicates"]) == (0, 5)
    # Counters, lists and the raw table agree.
    issue_id = scalar(settings, "SELECT any(issue_id) FROM events WHERE org_id = {org:UInt64}", org["org_id"])
    auth = {"Authorization": f"Bearer {org['api_key']}"}
    issue = httpx.get(f"{default_server}/api/issues/{issue_id}", headers=auth, timeout=30).json()
    assert issue["events"] == 5, issue
    listed = httpx.get(f"{default_server}/api/issues/{issue_id}/events", headers=auth, timeout=30).json()
    assert {e["event_id"].replace("-", "") for e in listed["events"]} == set(ids.values())
    page = httpx.get(
        f"{default_server}/api/projects/{org['project']}/issues",
        params={"range": "90d"},
        headers=auth,
        timeout=30,
    ).json()
    # The list's window is rolling and ends with the current minute (stacklens/metrics/windows.py): the event
    # sent 30 s ahead is in it once its minute has begun.
    in_window = 5 if int(sent["drift"] // 60) <= int(time.time() // 60) else 4
    assert [(i["id"], i["events"]) for i in page["issues"]] == [(str(issue_id), in_window)]
    assert scalar(settings, "SELECT count() FROM events WHERE org_id = {org:UInt64}", org["org_id"]) == 5


def _epoch(text: str) -> float:
    from datetime import UTC, datetime

    return datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()


def test_an_idempotency_key_reused_for_another_body_is_409(
    default_server: str, settings: Settings, make_org
) -> None:
    org = make_org()
    first = line(event(time.time()), org["app_key"])
    other = line(event(time.time()), org["app_key"])
    assert post(default_server, org["api_key"], first, **{"Idempotency-Key": "k-1"}).status_code == 200
    clash = post(default_server, org["api_key"], other, **{"Idempotency-Key": "k-1"})
    assert clash.status_code == 409, clash.text
    assert clash.json()["error"] == "Conflict" and '"k-1"' in clash.json()["detail"]
    # The same bytes again, even compressed this time, are the same batch: its first figures, nothing new.
    replay = post(
        default_server,
        org["api_key"],
        gzip.compress(first),
        **{"Idempotency-Key": "k-1", "Content-Encoding": "gzip"},
    )
    assert replay.status_code == 200 and replay.json()["accepted"] == 1
    assert scalar(settings, "SELECT count() FROM events WHERE org_id = {org:UInt64}", org["org_id"]) == 1


def test_nil_and_malformed_event_ids_are_assigned_fresh_ones(
    default_server: str, settings: Settings, make_org
) -> None:
    org = make_org()
    now = time.time()
    dashed = str(uuid.uuid4())
    payloads = [
        event(now, "0" * 32, message="first"),
        event(now, "0" * 32, message="second"),
        event(now, "00000000-0000-0000-0000-000000000000", message="third"),
        event(now, "not-an-id", message="fourth"),
        event(now, "ab" * 15, message="fifth"),  # 30 hex digits
        event(now, dashed.upper(), message="sixth"),  # the UUID form is an id as given
    ]
    body = b"\n".join(line(p, org["app_key"]) for p in payloads)
    answer = post(default_server, org["api_key"], body)
    assert answer.status_code == 200 and (answer.json()["accepted"], answer.json()["duplicates"]) == (6, 0)
    rows = stored(settings, org["org_id"])
    assert len(rows) == 6 and "0" * 32 not in rows
    assert dashed.replace("-", "") in rows
    by_message = {payload["message"]: (event_id, payload) for event_id, (_, payload) in rows.items()}
    for message in ("first", "second", "third", "fourth", "fifth"):
        event_id, payload = by_message[message]
        assert payload["event_id"] == event_id, "the payload names the id it is stored under"
        assert "sent_event_id" in payload
    # The same lines again are duplicates (the assigned id comes from the line), not new events.
    again = post(default_server, org["api_key"], body)
    assert (again.json()["accepted"], again.json()["duplicates"]) == (0, 6)


def test_numbers_are_stored_as_written(default_server: str, settings: Settings, make_org) -> None:
    org = make_org()
    event_id = uuid.uuid4().hex
    raw = (
        b'{"v":1,"type":"event","app_key":"%s","payload":{"event_id":"%s","message":"n",'
        b'"extra":{"huge":1e400,"u64":18446744073709551615,"beyond":18446744073709551616,'
        b'"below":-9223372036854775809,"plain":2.5}}}'
    ) % (str(org["app_key"]).encode(), event_id.encode())
    answer = post(default_server, org["api_key"], raw)
    assert answer.status_code == 200 and answer.json()["accepted"] == 1, answer.text
    extra = stored(settings, org["org_id"])[event_id][1]["extra"]
    assert extra == {
        "huge": "1e400",
        "u64": 18446744073709551615,
        "beyond": "18446744073709551616",
        "below": "-9223372036854775809",
        "plain": 2.5,
    }


def test_messages_say_what_is_wrong_in_the_senders_terms(
    default_server: str, settings: Settings, make_org
) -> None:
    org = make_org()
    good = line(event(time.time()), org["app_key"])
    bom = post(default_server, org["api_key"], b"\xef\xbb\xbf" + good)
    assert bom.status_code == 200 and (bom.json()["accepted"], bom.json()["rejected"]) == (1, []), bom.text
    garbage = post(
        default_server, org["api_key"], gzip.compress(good) + b"GARBAGE", **{"Content-Encoding": "gzip"}
    )
    assert garbage.status_code == 400
    assert "7 bytes of trailing data after its compressed data" in garbage.json()["detail"]
    truncated = post(
        default_server, org["api_key"], gzip.compress(good)[:-12], **{"Content-Encoding": "gzip"}
    )
    assert truncated.status_code == 400 and "truncated" in truncated.json()["detail"]
    versions = b"\n".join(
        [
            good.replace(b'"v": 1', b'"v": "1"'),
            good.replace(b'"v": 1', b'"v": true'),
            line(event(time.time()), org["app_key"]),
        ]
    )
    answer = post(default_server, org["api_key"], versions).json()
    errors = [r["error"] for r in answer["rejected"]]
    assert errors == [
        '`v` must be the number 1, not the text "1"',
        "`v` must be the number 1, not the value true",
    ]
    assert not any(word in " ".join(errors) for word in ("True", "None", "'1'"))


def test_another_body_under_the_key_of_a_half_landed_batch_is_refused(
    server: str, decade: Settings, make_org, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Body A's drain fails after its first partition landed: A was answered 200 (spooled), so its key is A's;
    body B sent under the same key before A finished landing is refused 409, and A lands whole."""
    org = make_org()
    now = time.time()
    body_a = b"\n".join(line(event(now - i * 31 * DAY, message=f"a{i}"), org["app_key"]) for i in range(3))
    body_b = b"\n".join(line(event(now - i * 31 * DAY, message=f"b{i}"), org["app_key"]) for i in range(3))
    real_insert = writer.insert_encoded
    calls = {"n": 0}

    def flaky(client: Any, table: str, columns: list[str], rows: list[bytes], token: str) -> None:
        calls["n"] += 1
        if calls["n"] == 2:
            raise OperationalError("the engine refused the insert")
        real_insert(client, table, columns, rows, token)

    monkeypatch.setattr(writer, "insert_encoded", flaky)
    first = post(server, org["api_key"], body_a, **{"Idempotency-Key": "reused"})
    assert first.status_code == 200 and first.json()["accepted"] == 3, first.text
    assert post(server, org["api_key"], body_b, **{"Idempotency-Key": "reused"}).status_code == 409
    assert settle_front_doors(timeout=30)
    monkeypatch.setattr(writer, "insert_encoded", real_insert)
    landed = (
        get_warehouse(decade)
        .query(
            "SELECT JSONExtractString(payload, 'message') FROM events WHERE org_id = {org:UInt64}",
            parameters={"org": org["org_id"]},
        )
        .result_rows
    )
    assert sorted(m for (m,) in landed) == ["a0", "a1", "a2"]
    # Landed now: B is still the conflicting body, A's resend replays A's answer.
    assert post(server, org["api_key"], body_b, **{"Idempotency-Key": "reused"}).status_code == 409
    assert post(server, org["api_key"], body_a, **{"Idempotency-Key": "reused"}).json() == first.json()


def test_a_line_nested_deeper_than_the_limit_is_refused_alone_however_strings_hide_its_brackets(
    default_server: str, settings: Settings, make_org
) -> None:
    """Closing brackets inside strings once hid depth from the per-line check: a 100-level line was stored,
    500–1,010 levels were refused in the parsers' words and 1,100 with "maximum recursion depth exceeded"."""
    org = make_org()
    ids = [uuid.uuid4().hex for _ in range(2)]
    depths = [MAX_JSON_DEPTH - 3, MAX_JSON_DEPTH, 65, 100, 500, 1_010, 1_100, 10_000]

    def hidden(depth: int) -> bytes:
        # {"v":…,"payload":{"extra": …}} adds two levels; each '["]",' opens one a plain count closes again.
        nested = b'["]",' * (depth - 2) + b'"x"' + b"]" * (depth - 2)
        return line(event(time.time()), org["app_key"]).replace(b'"level": "error"', b'"extra": ' + nested, 1)

    body = b"\n".join(
        [line(event(time.time(), ids[0]), org["app_key"]), *(hidden(d) for d in depths),
         line(event(time.time(), ids[1]), org["app_key"])]
    )  # fmt: skip
    answer = post(default_server, org["api_key"], body)
    assert answer.status_code == 200, answer.text
    errors = {r["line"]: r["error"] for r in answer.json()["rejected"]}
    too_deep = {i + 2 for i, d in enumerate(depths) if d > MAX_JSON_DEPTH}
    assert set(errors) == too_deep, errors
    for number in too_deep:
        assert f"nested deeper than {MAX_JSON_DEPTH} levels" in errors[number], errors[number]
        assert "recursion" not in errors[number]
    assert answer.json()["accepted"] == len(depths) - len(too_deep) + 2
    rows = stored(settings, org["org_id"])
    assert set(ids) <= set(rows)
