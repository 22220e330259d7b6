from __future__ import annotations

from collections.abc import Iterator

import pytest

from stacklens.alerts.channels.base import Message
from stacklens.alerts.channels.webhook import WebhookChannel, generate_secret, sign
from stacklens.outbound import AllowList, OutboundClient
from tests.stacklens.alerts.receiver import Receiver

MESSAGE = Message(
    id="msg_1",
    kind="firing",
    subject="Error rate 7.5 % > 5 %",
    text="since 10:00 <@here>",
    html="<p>x</p>",
    link="http://localhost/orgs/acme/alerts/1",
    data={"rule_id": 1},
)
CLIENT = OutboundClient(allow=AllowList.parse("127.0.0.1"), timeout_s=1.0)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver(secret=generate_secret()).start()
    yield r
    r.stop()


def test_signed_webhook_verifies_at_the_receiver(receiver: Receiver) -> None:
    result = WebhookChannel(receiver.url, receiver.secret or "", CLIENT).send(MESSAGE)
    assert result.ok and result.status_code == 200
    got = receiver.received[0]
    assert got.signature_ok is True and got.headers["webhook-id"] == "msg_1"
    body = got.json()
    assert body["version"] == 1 and body["type"] == "alert.firing" and body["data"]["rule_id"] == 1


def test_a_wrong_secret_fails_verification(receiver: Receiver) -> None:
    result = WebhookChannel(receiver.url, generate_secret(), CLIENT).send(MESSAGE)
    assert not result.ok and result.status_code == 401 and not result.retryable


def test_standard_webhooks_reference_signature() -> None:
    # The example of the Standard Webhooks specification (svix test vector).
    secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
    body = b'{"test": 2432232314}'
    assert sign(secret, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, body) == (
        "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
    )


def test_503_429_and_timeouts_are_retryable(receiver: Receiver) -> None:
    channel = WebhookChannel(receiver.url, receiver.secret or "", CLIENT)
    receiver.answer(503)
    assert channel.send(MESSAGE).retryable
    receiver.answer(429, {"Retry-After": "30"})
    result = channel.send(MESSAGE)
    assert result.retryable and result.retry_after_s == 30
    receiver.answer(200, stall_s=2.0)
    timed_out = channel.send(MESSAGE)
    assert timed_out.retryable and "timeout" in timed_out.error
    receiver.answer(404)
    assert not channel.send(MESSAGE).retryable


def test_refused_target_is_permanent() -> None:
    result = WebhookChannel("http://10.0.0.1/x", generate_secret(), OutboundClient()).send(MESSAGE)
    assert not result.ok and not result.retryable and "STACKLENS_OUTBOUND_ALLOW" in result.error
