"""The outbound client's two bounds, against a real local receiver: a total deadline (a receiver dripping
one byte at a time never trips the per-read timeout, yet the call ends at its deadline) and a cap on the
answer (a receiver streaming 1 GiB is read only up to the cap, then refused with a clear message)."""

from __future__ import annotations

import resource
import time
from collections.abc import Iterator

import pytest

from stacklens.outbound.client import AnswerTooLarge, OutboundClient
from stacklens.outbound.guard import AllowList
from stacklens.outbound.transport import DeadlinePassed
from tests.stacklens.hostile_receiver import HostileReceiver

LOCAL = AllowList.parse("127.0.0.1")
MiB = 1024 * 1024


@pytest.fixture
def hostile() -> Iterator[HostileReceiver]:
    receiver = HostileReceiver().start()
    yield receiver
    receiver.stop()


@pytest.mark.parametrize("mode", ["drip", "drip_headers"])
def test_a_dripping_receiver_is_cut_at_the_total_deadline(hostile: HostileReceiver, mode: str) -> None:
    hostile.mode, hostile.interval_s, hostile.drip_s = mode, 0.3, 12.0
    client = OutboundClient(allow=LOCAL, timeout_s=10.0, deadline_s=2.0)
    started = time.monotonic()
    with pytest.raises(DeadlinePassed, match="deadline"):
        client.post(hostile.url, b"{}", {"content-type": "application/json"})
    # Each byte comes well within the 10 s read timeout; only the 2 s deadline ends the call.
    assert 1.9 <= time.monotonic() - started < 3.5


def test_the_callers_budget_cuts_the_deadline_shorter(hostile: HostileReceiver) -> None:
    hostile.mode, hostile.interval_s, hostile.drip_s = "drip", 0.3, 12.0
    client = OutboundClient(allow=LOCAL, deadline_s=30.0).until(time.monotonic() + 1.0)
    started = time.monotonic()
    with pytest.raises(DeadlinePassed):
        client.request("GET", hostile.url, {})
    assert time.monotonic() - started < 2.5


def test_a_huge_answer_is_read_only_up_to_the_cap(hostile: HostileReceiver) -> None:
    hostile.mode, hostile.size = "large", 1024**3  # 1 GiB, chunked: no length to refuse it by up front
    client = OutboundClient(allow=LOCAL, max_answer_bytes=1 * MiB)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    started = time.monotonic()
    with pytest.raises(AnswerTooLarge, match=r"larger than 1 MiB"):
        client.request("GET", hostile.url, {})
    time.sleep(0.2)  # the server notices the closed connection
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - before
    # What was written is the cap plus what socket buffers hold, not the gigabyte (nor its 3 GB of memory).
    assert hostile.sent < 16 * MiB, hostile.sent
    assert grown < 64 * MiB, grown
    assert time.monotonic() - started < 5


def test_a_declared_length_over_the_cap_is_refused_before_reading(hostile: HostileReceiver) -> None:
    hostile.mode, hostile.size, hostile.declare = "large", 200 * MiB, True
    client = OutboundClient(allow=LOCAL)
    with pytest.raises(AnswerTooLarge, match=r"\(200\) is larger than 4 MiB"):
        client.request("GET", hostile.url, {})
    time.sleep(0.2)
    assert hostile.sent < 16 * MiB, hostile.sent


def test_a_caller_may_read_less_than_the_clients_cap(hostile: HostileReceiver) -> None:
    hostile.body = b"y" * (100 * 1024)
    client = OutboundClient(allow=LOCAL)
    assert client.request("GET", hostile.url, {}).body == hostile.body.decode()
    with pytest.raises(AnswerTooLarge, match="64 KiB"):
        client.post(hostile.url, b"", {}, max_answer_bytes=64 * 1024)


@pytest.mark.parametrize("declare", [False, True])
def test_a_caller_that_only_shows_the_answer_gets_it_cut_at_the_cap(
    hostile: HostileReceiver, declare: bool
) -> None:
    """``cut_answer`` (webhooks, Slack): a gigabyte answer, chunked or with its length declared, is read up to
    the cap and the connection closed; the status stands, nothing raises."""
    hostile.mode, hostile.size, hostile.declare = "large", 1024**3, declare
    client = OutboundClient(allow=LOCAL)
    started = time.monotonic()
    answer = client.post(hostile.url, b"{}", {}, max_answer_bytes=64 * 1024, cut_answer=True)
    time.sleep(0.2)
    assert (answer.status, answer.ok, answer.cut, len(answer.body)) == (200, True, True, 64 * 1024)
    assert hostile.sent < 16 * MiB, hostile.sent
    assert time.monotonic() - started < 5
    hostile.mode, hostile.body = "ok", b"short"
    assert client.post(hostile.url, b"{}", {}, max_answer_bytes=64 * 1024, cut_answer=True).cut is False
