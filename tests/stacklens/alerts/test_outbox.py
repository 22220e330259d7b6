from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import select

from stacklens.alerts import outbox
from stacklens.control.channels import create_channel, health
from stacklens.control.db import session_scope
from stacklens.control.models import utcnow
from stacklens.control.models.alerts import AlertChannel, AlertDelivery, AlertNotification
from stacklens.settings import Settings
from tests.stacklens.alerts.helpers import org_with_project
from tests.stacklens.alerts.receiver import Receiver

LATER = timedelta(hours=2)  # drain "as of" later than any backoff, to pick the retry now


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver().start()
    yield r
    r.stop()


@pytest.fixture
def setup(control_settings: Settings, receiver: Receiver) -> tuple[Settings, int, int]:
    """A webhook channel to the receiver, once on SQLite and once on PostgreSQL."""
    settings = control_settings.model_copy(update={"outbound_allow": "127.0.0.1"})
    org_id, _, _ = org_with_project(settings)
    with session_scope(settings) as session:
        row, secret = create_channel(session, org_id, settings, type="webhook", name="hook", url=receiver.url)
        receiver.secret = secret
        return settings, org_id, row.id


def _enqueue(settings: Settings, org_id: int, channel_id: int, n: int = 1, kind: str = "firing") -> list[str]:
    with session_scope(settings) as session:
        return [
            outbox.enqueue(
                session,
                org_id,
                [channel_id],
                kind,
                {"subject": f"alert {i}", "text": "t", "html": "<p>t</p>"},
            )[0]
            for i in range(n)
        ]


def _log(settings: Settings, notification_id: str) -> list[tuple[str, int | None]]:
    with session_scope(settings) as session:
        rows = session.scalars(
            select(AlertDelivery)
            .where(AlertDelivery.notification_id == notification_id)
            .order_by(AlertDelivery.id)
        )
        return [(r.outcome, r.status_code) for r in rows]


def test_retries_on_503_and_429_honouring_retry_after_then_delivers(setup, receiver: Receiver) -> None:
    settings, org_id, channel_id = setup
    (nid,) = _enqueue(settings, org_id, channel_id)
    receiver.answer(503)
    receiver.answer(429, {"Retry-After": "900"})
    assert outbox.drain(settings).retried == 1
    with session_scope(settings) as session:
        row = session.get(AlertNotification, nid)
        assert row.status == "pending" and row.next_attempt_at - utcnow() >= timedelta(seconds=14)
    assert outbox.drain(settings).delivered == 0  # not due yet
    outbox.drain(settings, now=utcnow() + LATER)
    with session_scope(settings) as session:
        assert session.get(AlertNotification, nid).next_attempt_at - utcnow() >= timedelta(seconds=890)
    assert outbox.drain(settings, now=utcnow() + LATER).delivered == 1
    assert _log(settings, nid) == [("retry", 503), ("retry", 429), ("delivered", 200)]
    assert {r.headers["webhook-id"] for r in receiver.received} == {nid}
    assert all(r.signature_ok for r in receiver.received)


def test_retryable_failures_give_up_only_after_24_hours(setup, receiver: Receiver) -> None:
    settings, org_id, channel_id = setup
    old, fresh = _enqueue(settings, org_id, channel_id, 2)
    with session_scope(settings) as session:
        session.get(AlertNotification, old).created_at = utcnow() - timedelta(hours=24, minutes=1)
        session.get(AlertNotification, fresh).created_at = utcnow() - timedelta(hours=23)
    receiver.answer(503)
    receiver.answer(503)
    outbox.drain(settings)
    assert _log(settings, old) == [("expired", 503)] and _log(settings, fresh) == [("retry", 503)]


def test_permanent_failures_pause_the_channel_and_a_passing_test_resumes_it(
    setup, receiver: Receiver
) -> None:
    settings, org_id, channel_id = setup
    ids = _enqueue(settings, org_id, channel_id, outbox.PAUSE_AFTER_PERMANENT_FAILURES)
    for _ in ids:
        receiver.answer(410)
    summary = outbox.drain(settings)
    assert summary.failed == len(ids) and all(_log(settings, i) == [("permanent", 410)] for i in ids)
    with session_scope(settings) as session:
        channel = session.get(AlertChannel, channel_id)
        assert health(channel).badge == "paused" and "410" in channel.pause_reason
    (waiting,) = _enqueue(settings, org_id, channel_id)
    assert outbox.drain(settings).delivered == 0  # paused: it waits, it is not dropped
    (test_id,) = _enqueue(settings, org_id, channel_id, kind="test")
    assert outbox.drain(settings, notification_ids=[test_id]).delivered == 1
    assert outbox.drain(settings).outcomes == {waiting: "delivered"}
    with session_scope(settings) as session:
        assert health(session.get(AlertChannel, channel_id)).badge == "healthy"


def test_rate_cap_folds_the_excess_into_one_digest(settings: Settings, receiver: Receiver) -> None:
    settings = settings.model_copy(update={"outbound_allow": "127.0.0.1"})
    org_id, _, _ = org_with_project(settings)
    with session_scope(settings) as session:
        slack, _ = create_channel(session, org_id, settings, type="slack", name="ops", url=receiver.url)
    ids = _enqueue(settings, org_id, slack.id, 4)
    summary = outbox.drain(settings)
    assert summary.digested == 4 and summary.delivered == 1  # Slack: one message a second
    body = receiver.received[0].json()
    assert body["text"] == "4 alert notifications (digest)"
    assert all(f"alert {i}" in body["blocks"][1]["text"]["text"] for i in range(4))
    with session_scope(settings) as session:
        rows = [session.get(AlertNotification, i) for i in ids]
        assert {r.status for r in rows} == {"digested"} and len({r.digest_id for r in rows}) == 1


SENDER = """
import sys
from datetime import timedelta
from stacklens.alerts.outbox import drain
from stacklens.settings import Settings
print("draining", flush=True)
drain(Settings(), lease=timedelta(seconds=2))
print("done", flush=True)
"""


def test_kill_9_mid_send_neither_loses_nor_duplicates(setup, receiver: Receiver, tmp_path: Path) -> None:
    settings, org_id, channel_id = setup
    ids = _enqueue(settings, org_id, channel_id, 5)
    receiver.answer(200)
    receiver.answer(200)
    receiver.answer(200, stall_s=30)  # the third send hangs: the sender is killed while it waits
    env = {
        **os.environ,
        "PYTHONPATH": str(Path.cwd()),
        "STACKLENS_DATA_DIR": str(settings.data_dir),
        "STACKLENS_DATABASE_URL": settings.resolved_database_url,
        "STACKLENS_OUTBOUND_ALLOW": "127.0.0.1",
        "STACKLENS_SECRET_KEY": settings.secret_key.get_secret_value(),
    }
    errors = tmp_path / "sender.err"
    with errors.open("wb") as err:
        proc = subprocess.Popen(
            [sys.executable, "-c", SENDER], env=env, stdout=subprocess.DEVNULL, stderr=err
        )
    deadline = time.monotonic() + 30
    while len(receiver.received) < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(receiver.received) == 3, errors.read_text()
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(10)
    with session_scope(settings) as session:
        states = {i: session.get(AlertNotification, i).status for i in ids}
    assert [states[i] for i in ids] == ["delivered", "delivered", "sending", "pending", "pending"]
    # A drain whose clock reads the dead sender's 2 s lease as expired: the drain's own ``now``.
    assert outbox.drain(settings, now=utcnow() + timedelta(seconds=2.2)).delivered == 3
    with session_scope(settings) as session:
        assert {session.get(AlertNotification, i).status for i in ids} == {"delivered"}
    seen = [r.headers["webhook-id"] for r in receiver.received]
    assert set(seen) == set(ids)  # nothing lost
    assert seen.count(ids[2]) == 2 and all(seen.count(i) == 1 for i in ids if i != ids[2])  # resent, same id
    assert all(sum(o == "delivered" for o, _ in _log(settings, i)) == 1 for i in ids)
    assert json.loads(receiver.received[-1].body)["id"] in ids
