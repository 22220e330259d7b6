"""Exactly one outcome per item through a real server, with a fault injected at each step of a landing: a
malformed envelope (400), a project's quota (429), a full queue (503), a spool on a read-only volume (503),
a drain that fails, a door that takes longer than the request waits (503, landed later) and a sender that
hangs up. Envelopes carry an error or a transaction, an attachment, a client report, a session and log
records: for every category the outcomes add up to the items sent, and a request the door refused gives its
quota back (the resend does not pay twice)."""

from __future__ import annotations

import json
import subprocess
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

import api.landing
import stacklens.ingest.front_door.door as door_module
from stacklens.control import accounts
from stacklens.control.db import migrate_control_store, session_scope
from stacklens.control.projects import create_project
from stacklens.ingest.front_door import drains_held, front_door, settle_front_doors
from stacklens.outcomes.counting import MAX_DISCARD_ENTRIES, MAX_DISCARD_QUANTITY, MAX_DISCARDS_PER_REPORT
from stacklens.outcomes.managed import settled_later
from stacklens.outcomes.reads import OutcomeQuery, outcome_rows
from stacklens.settings import Settings
from stacklens.warehouse.client import get_warehouse
from stacklens.warehouse.migrations import apply_migrations
from tests.api.live import serve
from tests.api.sentry_live import envelope, event_item, fresh_event

# Items one envelope of :func:`_envelope` carries beside its event or transaction, by category.
BESIDE = Counter({"attachment": 1, "client_report": 1, "session": 1, "log": 2})


@pytest.fixture
def stores(settings: Settings) -> Settings:
    migrate_control_store(settings)
    apply_migrations(settings)
    return settings


def _org(settings: Settings) -> dict[str, Any]:
    with session_scope(settings) as session:
        org, api_key = accounts.create_organization(
            session,
            f"Balance {uuid.uuid4().hex[:6]}",
            f"o-{uuid.uuid4().hex[:8]}@example.test",
            "password-123",
        )
        a, key_a = create_project(session, org.id, "Shop")
        b, key_b = create_project(session, org.id, "Quota")
        return {
            "org_id": org.id,
            "api_key": api_key,
            "a": {"id": a.id, "slug": a.slug, "key": key_a},
            "b": {"id": b.id, "slug": b.slug, "key": key_b},
        }


def _transaction() -> dict[str, Any]:
    now = time.time()
    return {
        "event_id": uuid.uuid4().hex,
        "type": "transaction",
        "transaction": "/checkout",
        "start_timestamp": now - 0.2,
        "timestamp": now,
        "contexts": {"trace": {"op": "http.server", "trace_id": uuid.uuid4().hex, "span_id": "a" * 16}},
        "spans": [],
    }


def _envelope(transaction: bool = False) -> tuple[bytes, Counter[str]]:
    """An error (or a transaction), an attachment (counted, never stored), a client report (the SDK's,
    nothing dropped), a session and a log item of two records, as SDKs send them; its items by category."""
    now = time.time()
    first = ({"type": "transaction"}, json.dumps(_transaction()).encode()) if transaction else None
    session = {"sid": uuid.uuid4().hex, "status": "ok", "started": now, "attrs": {"release": "web@1.0.0"}}
    logs = {"items": [{"timestamp": now, "level": "info", "body": f"line {n}"} for n in range(2)]}
    body = envelope(
        [
            first or event_item(fresh_event()),
            ({"type": "attachment", "filename": "log.txt"}, b"hello"),
            ({"type": "client_report"}, json.dumps({"timestamp": now, "discarded_events": []}).encode()),
            ({"type": "session"}, json.dumps(session).encode()),
            ({"type": "log", "item_count": 2}, json.dumps(logs).encode()),
        ]
    )
    return body, BESIDE + Counter({"transaction" if transaction else "error": 1})


class Sender:
    """Posts envelopes to one project and keeps what it sent, by category, and the answers."""

    def __init__(self, base: str, project: dict[str, Any]) -> None:
        self.url = f"{base}/api/{project['id']}/envelope/"
        self.key = project["key"]
        self.sent: Counter[str] = Counter()
        self.codes: Counter[int | str] = Counter()

    def post(
        self, body: bytes | None = None, items: Counter[str] | None = None, timeout: float = 60
    ) -> int | str:
        """Post ``body`` holding ``items`` (default: an envelope of :func:`_envelope`, every other one with a
        transaction)."""
        if body is None:
            body, items = _envelope(transaction=sum(self.codes.values()) % 2 == 1)
        self.sent.update(items or Counter())
        try:
            answer = httpx.post(self.url, params={"sentry_key": self.key}, content=body, timeout=timeout)
        except httpx.TimeoutException:
            self.codes["hung up"] += 1
            return "hung up"
        self.codes[answer.status_code] += 1
        return answer.status_code


def _outcomes(settings: Settings, org_id: int) -> dict[tuple[int, str, str, str], int]:
    assert settle_front_doors(60)
    assert settled_later()
    rows = outcome_rows(settings, get_warehouse(settings), org_id, OutcomeQuery(), {}, datetime.now(UTC))
    found: Counter[tuple[int, str, str, str]] = Counter()
    for row in rows:
        found[(row.project_id, row.category, row.outcome, row.reason)] += row.quantity
    return dict(found)


def _by_category(outcomes: dict[tuple[int, str, str, str], int], project_id: int) -> Counter[str]:
    totals: Counter[str] = Counter()
    for (project, category, _, _), quantity in outcomes.items():
        if project == project_id:
            totals[category] += quantity
    return totals


@contextmanager
def _read_only(folder: Path) -> Iterator[None]:
    """``folder`` on a read-only filesystem of its own (root ignores file modes, not a read-only mount)."""
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", str(folder)], check=True)
    try:
        yield
    finally:
        subprocess.run(["umount", str(folder)], check=True)


@contextmanager
def _door_busy(settings: Settings, seconds: float) -> Iterator[None]:
    """No accept group starts for ``seconds`` (the door's accepting lock held, as a long group holds it)."""
    door = front_door(settings)
    door.acceptor.accepting.acquire()
    release = threading.Timer(seconds, door.acceptor.accepting.release)
    release.start()
    try:
        yield
    finally:
        release.join()


def test_every_item_has_one_outcome_whatever_happens_to_its_request(
    stores: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    org = _org(stores)
    with serve(stores) as base:
        shop = Sender(base, org["a"])
        # Answered: three envelopes land.
        assert [shop.post() for _ in range(3)] == [200, 200, 200]

        # A malformed envelope, once its key is known: an item that is not a JSON object (every item of the
        # envelope is counted), and an item header that is not JSON (the items before it are).
        unreadable = envelope(
            [({"type": "event"}, b"[1, 2]"), ({"type": "attachment", "filename": "a"}, b"x")]
        )
        assert shop.post(unreadable, Counter({"error": 1, "attachment": 1})) == 400
        broken = envelope([event_item(fresh_event())]) + b"{not json\n{}\n"
        assert shop.post(broken, Counter({"error": 1})) == 400
        # A check-in that names no monitor refuses its envelope whole, the event beside it included.
        check_in = (
            {"type": "check_in"},
            json.dumps({"check_in_id": uuid.uuid4().hex, "status": "ok"}).encode(),
        )
        assert shop.post(envelope([event_item(fresh_event()), check_in]), Counter({"error": 1})) == 400

        # A spool that cannot be written: 503, nothing lands.
        assert settle_front_doors(60)  # what was spooled is landed first (its journals are not hidden)
        with _read_only(stores.data_dir / "front_door"):
            assert [shop.post() for _ in range(2)] == [503, 503]

        # A drain that fails once: the requests are answered from the spool and land on the retry, counted
        # once (not again when the drain is retried).
        door = front_door(stores)
        failures = [RuntimeError("injected: the warehouse refused the insert")]
        drain = door.drainer.drain

        def failing_drain(*args: Any, **kwargs: Any) -> None:
            if failures:
                raise failures.pop()
            drain(*args, **kwargs)

        monkeypatch.setattr(door.drainer, "drain", failing_drain)
        assert [shop.post() for _ in range(2)] == [200, 200]
        assert settle_front_doors(60) and not failures, "the drain failed once, then landed"
        monkeypatch.undo()

        # The door takes longer than a request waits: 503, and the rows land once the door takes them.
        monkeypatch.setattr(api.landing, "WAIT_SECONDS", 0.3)
        with _door_busy(stores, 1.5):
            assert shop.post() == 503
        monkeypatch.undo()
        # A sender that hangs up while its request waits for the door.
        with _door_busy(stores, 1.5):
            assert shop.post(timeout=0.3) == "hung up"

        # A project's quota (8 items a minute) and a full queue: the requests refused by the queue give their
        # quota back, so the sender's resends are not refused by a quota they never used.
        quota = Sender(base, org["b"])
        put = httpx.put(
            f"{base}/api/projects/{org['b']['slug']}/quota",
            json={"events_per_minute": 8},  # two envelopes: an event, a session and two log records each
            headers={"Authorization": f"Bearer {org['api_key']}"},
        )
        assert put.status_code == 200, put.text
        assert settle_front_doors(60)
        monkeypatch.setattr(door_module, "MAX_ROWS_WAITING", 1)
        with drains_held(stores):
            answers = []
            for _ in range(3):
                answers.append(quota.post())
                assert settled_later()  # the give-back runs on a thread of the server's (this process)
            assert answers == [200, 503, 503]
        monkeypatch.undo()
        assert settled_later()
        assert [quota.post() for _ in range(2)] == [200, 429]

        outcomes = _outcomes(stores, org["org_id"])
    # The sums, category by category, are the items sent.
    assert _by_category(outcomes, org["a"]["id"]) == shop.sent, outcomes
    assert _by_category(outcomes, org["b"]["id"]) == quota.sent, outcomes
    a, b = org["a"]["id"], org["b"]["id"]

    def events(project: int, outcome: str, reason: str = "") -> int:  # errors and transactions
        return sum(outcomes.get((project, c, outcome, reason), 0) for c in ("error", "transaction"))

    # And each fault is named: 3 answered, 2 through a failing drain, 1 after the door's wait, 1 hung up.
    assert events(a, "accepted") == outcomes[(a, "attachment", "accepted", "")] == 3 + 2 + 1 + 1
    assert outcomes[(a, "log", "accepted", "")] == 2 * 7
    assert outcomes[(a, "error", "invalid", "malformed_envelope")] == 3
    assert outcomes[(a, "attachment", "invalid", "malformed_envelope")] == 1
    assert events(a, "invalid", "spool_unavailable") == 2
    assert outcomes[(a, "attachment", "invalid", "spool_unavailable")] == 2
    assert outcomes[(a, "session", "invalid", "spool_unavailable")] == 2
    assert outcomes[(a, "log", "invalid", "spool_unavailable")] == 4
    assert outcomes[(a, "client_report", "accepted", "")] == 7 + 2, (
        "a report stands whatever its envelope's fate"
    )
    assert events(b, "accepted") == 2
    assert events(b, "invalid", "queue_full") == 2
    assert events(b, "rate_limited", "project_quota") == 1
    assert outcomes[(b, "log", "rate_limited", "project_quota")] == 2
    assert outcomes[(b, "attachment", "rate_limited", "project_quota")] == 1


def test_a_client_report_adds_at_most_what_an_sdk_can_have_dropped(stores: Settings) -> None:
    """A DSN holder's report of 2**63 "discarded" items, and of 50 made-up reasons: bounded, and the report
    says it claimed more."""
    org = _org(stores)
    lie = {
        "timestamp": time.time(),
        "discarded_events": [{"reason": "sample_rate", "category": "error", "quantity": 2**63}]
        + [{"reason": f"made_up_{n}", "category": "transaction", "quantity": 10} for n in range(50)],
    }
    with serve(stores) as base:
        sent = httpx.post(
            f"{base}/api/{org['a']['id']}/envelope/",
            params={"sentry_key": org["a"]["key"]},
            content=envelope(
                [event_item(fresh_event()), ({"type": "client_report"}, json.dumps(lie).encode())]
            ),
            timeout=60,
        )
        assert sent.status_code == 200, sent.text
        outcomes = _outcomes(stores, org["org_id"])
    a = org["a"]["id"]
    assert outcomes[(a, "error", "accepted", "")] == 1
    assert outcomes[(a, "client_report", "invalid", "discards_over_bound")] == 1
    assert (a, "client_report", "accepted", "") not in outcomes
    assert outcomes[(a, "error", "filtered", "sample_rate")] == MAX_DISCARD_QUANTITY
    reported = sum(n for (_, _, _, reason), n in outcomes.items() if reason.startswith(("sample", "made_up")))
    assert reported <= MAX_DISCARDS_PER_REPORT
    assert len([key for key in outcomes if key[3].startswith("made_up")]) == MAX_DISCARD_ENTRIES - 1
