"""A merge's hold at the real front door (issue #62): only the held project's events wait (another project's
events, and the project's transactions, land meanwhile), they land once when the hold ends, and events
stamped before a merge committed land on the issue the merge redirected their fingerprint to. The stamp
rewrite itself on rows encoded as ingest encodes them, a payload that imitates the stamp included."""

from __future__ import annotations

import json
import threading
import time
import uuid

import orjson
from clickhouse_connect.driver.client import Client

from stacklens.ingest.fields import Origin
from stacklens.ingest.front_door import front_door, settle_front_doors
from stacklens.ingest.front_door.drain import DRAIN_INTERVAL_SECONDS
from stacklens.ingest.normalise import event_row
from stacklens.ingest.project_holds import restamped
from stacklens.ingest.service import Attribution, BatchResult, admit_batch
from stacklens.settings import Settings
from tests.stacklens.ingest.front_door_seed import ORG, error_line, transaction_line

HELD, OTHER = 70, 71
KEYS = {"stacklens_app_held": HELD, "stacklens_app_other": OTHER}


def _land(settings: Settings, body: bytes, key: str) -> BatchResult:
    admitted = admit_batch(
        settings,
        ORG,
        body,
        header_app_key=key,
        idempotency_key=None,
        resolve=lambda raw: Attribution(KEYS[raw], None, 1) if raw in KEYS else None,
        take_events=lambda _n: None,
        figures_answered=True,
    )
    return admitted if isinstance(admitted, BatchResult) else admitted.land()


def _events(warehouse: Client, project_id: int) -> list[tuple[str, int, str]]:
    rows = warehouse.query(
        "SELECT event_id, issue_id, fingerprint FROM events WHERE org_id = {org:UInt64}"
        " AND project_id = {p:UInt64} ORDER BY event_id",
        parameters={"org": ORG, "p": project_id},
    ).result_rows
    return [(uuid.UUID(str(e)).hex, int(i), str(f)) for e, i, f in rows]


def _count(warehouse: Client, table: str, project_id: int) -> int:
    sql = f"SELECT count() FROM {table} WHERE org_id = {{org:UInt64}} AND project_id = {{p:UInt64}}"  # noqa: S608 - the test's own table names
    return int(warehouse.query(sql, parameters={"org": ORG, "p": project_id}).result_rows[0][0])


def test_a_hold_keeps_only_its_projects_events(settings: Settings, warehouse: Client) -> None:
    door = front_door(settings)
    with door.landing_held(HELD):
        assert _land(settings, error_line(), "stacklens_app_held").accepted == 1
        assert _land(settings, transaction_line(), "stacklens_app_held").accepted == 1
        assert _land(settings, error_line(), "stacklens_app_other").accepted == 1
        time.sleep(4 * DRAIN_INTERVAL_SECONDS)  # several drains' time
        assert door.settle_spooled(10)
        # Another project's event and the held project's transaction landed; the held event waits, answered.
        assert _count(warehouse, "events", OTHER) == 1
        assert _count(warehouse, "transactions", HELD) == 1
        assert _count(warehouse, "events", HELD) == 0
        assert door.status()["rows_spooled"] >= 1
        assert any(path.name.startswith("h-") for path in door.state.journal.folder.iterdir())
        # Still landing for everyone else while the hold lasts.
        assert _land(settings, error_line(), "stacklens_app_other").accepted == 1
        assert door.settle_spooled(10)
        assert _count(warehouse, "events", OTHER) == 2
        assert _count(warehouse, "events", HELD) == 0
    assert settle_front_doors(30)
    assert _count(warehouse, "events", HELD) == 1  # once, after the hold
    assert door.status()["rows_spooled"] == 0
    # A resend of the held event, now landed, is a duplicate: its key stayed known through the hold.
    stored = _events(warehouse, HELD)[0][0]
    assert _land(settings, error_line(stored), "stacklens_app_held").duplicates == 1


def test_events_stamped_before_a_merge_land_on_its_issue(settings: Settings, warehouse: Client) -> None:
    first = _land(settings, error_line(title="Stale"), "stacklens_app_held")
    assert first.accepted == 1 and settle_front_doors(30)
    ((_, own_issue, fingerprint),) = _events(warehouse, HELD)
    door = front_door(settings)
    survivor = own_issue + 1
    with door.landing_held(HELD) as hold:
        # Prepared with the overrides of before the merge (none): stamped with the fingerprint's own issue.
        late = str(uuid.uuid4().hex)
        assert _land(settings, error_line(late, title="Stale"), "stacklens_app_held").accepted == 1
        unrelated = str(uuid.uuid4().hex)
        assert _land(settings, error_line(unrelated, title="Other"), "stacklens_app_held").accepted == 1
        hold.redirect({fingerprint: survivor})
    assert settle_front_doors(30)
    by_id = {event_id: (issue, fp) for event_id, issue, fp in _events(warehouse, HELD)}
    assert by_id[late] == (survivor, fingerprint)  # the fingerprint stays the version's; the issue follows
    assert by_id[unrelated][0] != survivor
    # Landed after the hold, through no hold at all: still redirected (the redirect outlives the hold).
    after = str(uuid.uuid4().hex)
    assert _land(settings, error_line(after, title="Stale"), "stacklens_app_held").accepted == 1
    assert settle_front_doors(30)
    assert {e: i for e, i, _ in _events(warehouse, HELD)}[after] == survivor


def test_a_backup_cut_off_waits_for_a_merges_held_events(settings: Settings, warehouse: Client) -> None:
    """An event a merge holds back was answered before a backup's cut-off: the backup waits for the merge to
    end and the event to land, so the backup holds it."""
    door = front_door(settings)
    at_cut_off: list[int] = []

    def backup() -> None:
        with door.drains_held(30):
            at_cut_off.append(_count(warehouse, "events", HELD))

    with door.landing_held(HELD):
        assert _land(settings, error_line(), "stacklens_app_held").accepted == 1
        cutting = threading.Thread(target=backup)
        cutting.start()
        time.sleep(4 * DRAIN_INTERVAL_SECONDS)
        assert at_cut_off == []  # waiting for the merge
    cutting.join(30)
    assert at_cut_off == [1]


def _encoded(payload: dict[str, object]) -> tuple[bytes, str, int]:
    origin = Origin(org_id=1, project_id=5, service=None, batch_id="b", received_at=time.time())
    raw = json.dumps(payload).encode()
    row = event_row(payload, origin, raw, orjson.Fragment(orjson.dumps(payload)))
    return orjson.dumps(row), str(row["fingerprint"]), int(row["issue_id"])


def test_restamping_changes_the_rows_own_stamp_only() -> None:
    payload: dict[str, object] = {
        "event_id": uuid.uuid4().hex,
        "exception": {"values": [{"type": "ValueError", "value": "x"}]},
    }
    _, fingerprint, own = _encoded(payload)
    # A payload that imitates the stamp (the payload is embedded as raw JSON, before the row's own stamp).
    payload["extra"] = {"issue_id": own, "fingerprint": fingerprint}
    row, fingerprint_again, _ = _encoded(payload)
    assert fingerprint_again == fingerprint
    assert row.count(f'"issue_id":{own},"fingerprint":"{fingerprint}"'.encode()) == 2
    moved = orjson.loads(restamped(row, {fingerprint: 424242}))
    assert moved["issue_id"] == 424242 and moved["fingerprint"] == fingerprint
    assert moved["payload"]["extra"] == {"issue_id": own, "fingerprint": fingerprint}
    assert {k: v for k, v in moved.items() if k != "issue_id"} == {
        k: v for k, v in orjson.loads(row).items() if k != "issue_id"
    }
    assert restamped(row, {"another": 1}) is row
    assert restamped(row, {fingerprint: own}) is row
    assert restamped(row, None) is row
