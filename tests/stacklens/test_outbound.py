from __future__ import annotations

import random
from collections.abc import Iterator

import httpx
import pytest

from stacklens.outbound import (
    BACKOFF_CAP_S,
    AllowList,
    OutboundClient,
    OutboundRefused,
    backoff_delay,
    parse_retry_after,
)
from tests.stacklens.alerts.receiver import Receiver


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver().start()
    yield r
    r.stop()


def test_allowed_loopback_receiver_gets_the_post(receiver: Receiver) -> None:
    client = OutboundClient(allow=AllowList.parse("127.0.0.1"))
    response = client.post(receiver.url, b'{"a": 1}', {"content-type": "application/json"})
    assert response.ok and response.status == 200 and response.excerpt == "ok"
    assert receiver.received[0].body == b'{"a": 1}'


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1",
        "10.1.2.3",
        "169.254.169.254",
        "192.168.0.10",
        "172.16.5.5",
        "::1",
        "fe80::1",
        "::ffff:127.0.0.1",
        "0.0.0.0",
    ],
)
def test_internal_addresses_are_refused_before_connecting(address: str) -> None:
    calls: list[str] = []

    def resolver(host: str, port: int) -> list[str]:
        calls.append(host)
        return [address]

    client = OutboundClient(resolver=resolver)
    client._send = lambda *a: pytest.fail("a refused target must never be connected to")
    with pytest.raises(OutboundRefused, match="STACKLENS_OUTBOUND_ALLOW"):
        client.post("http://hooks.example.test/x", b"{}", {})
    assert calls == ["hooks.example.test"]


def test_every_resolved_address_is_checked() -> None:
    client = OutboundClient(resolver=lambda h, p: ["93.184.215.14", "10.0.0.7"])
    with pytest.raises(OutboundRefused, match="10.0.0.7"):
        client.check("https://mixed.example.test/")


def test_real_resolution_of_localhost_is_refused_unless_allowed(receiver: Receiver) -> None:
    with pytest.raises(OutboundRefused, match="loopback"):
        OutboundClient().post(receiver.url.replace("127.0.0.1", "localhost"), b"{}", {})
    assert receiver.received == []
    allowed = OutboundClient(allow=AllowList.parse("localhost"))
    assert allowed.post(receiver.url.replace("127.0.0.1", "localhost"), b"{}", {}).ok
    by_cidr = OutboundClient(allow=AllowList.parse("10.0.0.0/8, 127.0.0.0/8"))
    assert by_cidr.post(receiver.url, b"{}", {}).ok


def test_public_address_passes_the_guard() -> None:
    assert OutboundClient(resolver=lambda h, p: ["93.184.215.14"]).check("https://example.test/")


@pytest.mark.parametrize(
    "url", ["ftp://x.test/", "file:///etc/passwd", "http:///nohost", "javascript:alert(1)"]
)
def test_bad_urls_are_refused_with_a_reason(url: str) -> None:
    with pytest.raises(OutboundRefused, match="url"):
        OutboundClient().check(url)


def test_timeouts_raise_and_retry_after_is_parsed(receiver: Receiver) -> None:
    receiver.answer(200, stall_s=1.5)
    client = OutboundClient(allow=AllowList.parse("127.0.0.1"), timeout_s=0.5)
    with pytest.raises(httpx.TimeoutException):
        client.post(receiver.url, b"{}", {})
    receiver.answer(429, {"Retry-After": "120"})
    response = OutboundClient(allow=AllowList.parse("127.0.0.1")).post(receiver.url, b"{}", {})
    assert response.status == 429 and response.retryable and response.retry_after_s == 120


def test_in_call_retries_honour_retry_after(receiver: Receiver) -> None:
    receiver.answer(503)
    receiver.answer(429, {"Retry-After": "7"})
    waits: list[float] = []
    response = OutboundClient(allow=AllowList.parse("127.0.0.1")).post(
        receiver.url, b"{}", {}, retries=3, sleep=waits.append
    )
    assert response.ok and len(receiver.received) == 3
    assert 15 <= waits[0] <= 30 and waits[1] >= 7


def test_backoff_grows_with_jitter_and_is_capped() -> None:
    rng = random.Random(1)
    delays = [backoff_delay(n, rng=rng) for n in range(1, 12)]
    assert 15 <= delays[0] <= 30 and 30 <= delays[1] <= 60
    assert all(d <= BACKOFF_CAP_S for d in delays) and delays[-1] >= BACKOFF_CAP_S / 2
    assert len({round(backoff_delay(3), 6) for _ in range(20)}) > 1  # jitter
    assert backoff_delay(1, retry_after_s=600) == 600
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412480 - 60) == 60
    assert parse_retry_after("soon") is None and parse_retry_after(None) is None
