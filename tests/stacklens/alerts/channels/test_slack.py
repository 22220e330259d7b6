"""Slack's incoming-webhook body (text escaped as Slack asks) sent to a real receiver."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from stacklens.alerts.channels.base import Message
from stacklens.alerts.channels.slack import SlackChannel, slack_body
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
    r = Receiver().start()
    yield r
    r.stop()


def test_slack_body_shape_and_escaping(receiver: Receiver) -> None:
    body = slack_body(MESSAGE)
    assert body["text"] == MESSAGE.subject and body["blocks"][0]["type"] == "section"
    assert "&lt;@here&gt;" in body["blocks"][1]["text"]["text"]
    assert SlackChannel(receiver.url, CLIENT).send(MESSAGE).ok
    assert json.loads(receiver.received[-1].body)["blocks"][2]["elements"][0]["text"].startswith("<http://")
