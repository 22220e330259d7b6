"""One organization's slow receiver does not delay another's alerts: organization A's webhook drips its
answer one byte at a time (never tripping the per-read timeout), organization B's answers at once. B's
notification is delivered on time, A's send ends at its deadline and is retried later; a receiver answering
far too much is refused after reading at most the cap, with a message saying so."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from sqlalchemy import select

from stacklens.alerts import outbox
from stacklens.alerts.sending import send_test
from stacklens.control.channels import create_channel
from stacklens.control.db import session_scope
from stacklens.control.models.alerts import AlertDelivery
from stacklens.outbound import AllowList, OutboundClient
from stacklens.settings import Settings
from stacklens.tenant_pool import run_per_tenant
from tests.stacklens.alerts.helpers import org_with_project
from tests.stacklens.alerts.receiver import Receiver
from tests.stacklens.hostile_receiver import HostileReceiver

# A's deadline per send (each of its three sends runs to it: the drain takes 3 of them). It stays three times
# the drip interval, so a read never times out first, and B's bound stays well under it.
DEADLINE_S = 1.5


@pytest.fixture
def slow() -> Iterator[HostileReceiver]:
    receiver = HostileReceiver(mode="drip", interval_s=0.5, drip_s=10.0).start()
    yield receiver
    receiver.stop()


@pytest.fixture
def healthy() -> Iterator[Receiver]:
    receiver = Receiver().start()
    yield receiver
    receiver.stop()


def _channel(settings: Settings, org_id: int, url: str) -> int:
    with session_scope(settings) as session:
        row, _secret = create_channel(session, org_id, settings, type="webhook", name="hook", url=url)
        return row.id


def _enqueue(settings: Settings, org_id: int, channel_id: int, subject: str) -> str:
    with session_scope(settings) as session:
        payload = {"subject": subject, "text": "t", "html": "<p>t</p>"}
        return outbox.enqueue(session, org_id, [channel_id], "firing", payload)[0]


def test_a_dripping_receiver_delays_only_its_own_organization(
    control_settings: Settings, slow: HostileReceiver, healthy: Receiver
) -> None:
    settings = control_settings.model_copy(update={"outbound_allow": "127.0.0.1"})
    org_a, _, _ = org_with_project(settings, "Initech")
    org_b, _, _ = org_with_project(settings, "Globex")
    slow_channel = _channel(settings, org_a, slow.url)
    healthy_channel = _channel(settings, org_b, healthy.url)
    # A's notifications come first in the outbox: sent one after another, B's would wait for all of them.
    a_ids = [_enqueue(settings, org_a, slow_channel, f"checkout slow {i}") for i in range(3)]
    b_id = _enqueue(settings, org_b, healthy_channel, "api errors")
    # A deadline three drip intervals long: the deadline, not the per-read timeout, ends A's sends.
    client = OutboundClient(allow=AllowList.parse("127.0.0.1"), deadline_s=DEADLINE_S)

    started = time.monotonic()
    summary = outbox.drain(settings, client=client)
    took = time.monotonic() - started

    assert summary.outcomes[b_id] == "delivered"
    assert len(healthy.received) == 1
    assert slow.arrivals and healthy.received  # both receivers were called
    # B's receiver was called at once, not after A's 10 s drips (nor after A's first deadline).
    assert healthy_arrival_delay(healthy, started) < DEADLINE_S * 2 / 3
    # Each of A's sends ends at its deadline; the drain as a whole ends within A's budget.
    assert [summary.outcomes.get(i) for i in a_ids] == ["retry"] * 3
    assert took < 3 * DEADLINE_S + 3
    with session_scope(settings) as session:
        errors = session.scalars(select(AlertDelivery.error).where(AlertDelivery.channel_id == slow_channel))
        assert all("deadline" in e for e in errors)


def healthy_arrival_delay(receiver: Receiver, started: float) -> float:
    return receiver.arrival_times[0] - started


def test_an_organizations_budget_leaves_the_rest_for_the_next_drain(
    control_settings: Settings, slow: HostileReceiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = control_settings.model_copy(update={"outbound_allow": "127.0.0.1"})
    org_a, _, _ = org_with_project(settings, "Initech")
    slow_channel = _channel(settings, org_a, slow.url)
    ids = [_enqueue(settings, org_a, slow_channel, f"checkout slow {i}") for i in range(3)]
    monkeypatch.setattr(outbox, "run_per_tenant", _with_budget(1.0))

    started = time.monotonic()
    summary = outbox.drain(settings, client=OutboundClient(allow=AllowList.parse("127.0.0.1")))

    # The first send is cut at the budget (not the 30 s deadline); the other two wait, still pending.
    assert time.monotonic() - started < 3.0
    assert summary.outcomes == {ids[0]: "retry"}
    assert summary.deferred == 2


def _with_budget(budget_s: float) -> Callable[..., list[Any]]:
    """:func:`run_per_tenant` with a shorter budget per organization."""
    return lambda groups, work: run_per_tenant(groups, work, budget_s=budget_s)


@pytest.mark.parametrize(("status", "outcome"), [(200, "delivered"), (204, "delivered"), (404, "permanent")])
def test_a_receiver_answering_a_gigabyte_is_judged_by_its_status_reading_only_the_cap(
    control_settings: Settings, status: int, outcome: str
) -> None:
    """A 2xx is a delivery whatever its body's size (issue #62: one over 64 KiB was recorded as a permanent
    failure); the body is cut at 64 KiB and the rest never read."""
    settings = control_settings.model_copy(update={"outbound_allow": "127.0.0.1"})
    huge = HostileReceiver(mode="large", size=1024**3, status=status).start()
    try:
        org, _, _ = org_with_project(settings, "Initech")
        channel = _channel(settings, org, huge.url)
        delivery = send_test(settings, org, channel)
        time.sleep(0.2)
    finally:
        huge.stop()
    assert delivery["outcome"] == outcome, delivery
    assert delivery["status_code"] == status
    assert ("larger than" in (delivery["error"] or "")) is False
    assert huge.sent < 16 * 1024 * 1024, huge.sent


def test_a_large_server_error_answer_is_retried_not_failed_for_good(control_settings: Settings) -> None:
    settings = control_settings.model_copy(update={"outbound_allow": "127.0.0.1"})
    huge = HostileReceiver(mode="large", size=200 * 1024, status=503).start()
    try:
        org, _, _ = org_with_project(settings, "Initech")
        channel = _enqueue(settings, org, _channel(settings, org, huge.url), "checkout slow")
        summary = outbox.drain(settings, client=OutboundClient(allow=AllowList.parse("127.0.0.1")))
    finally:
        huge.stop()
    assert summary.outcomes == {channel: "retry"}
