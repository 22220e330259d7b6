"""Alert channels: checked when created, listed without their secrets, their health told from the delivery
log."""

from __future__ import annotations

from datetime import timedelta

import pytest

from stacklens.alerts.errors import AlertInputError, AlertNotFound
from stacklens.control.channels import (
    create_channel,
    delete_channel,
    get_channel,
    health,
    list_channels,
    target_text,
)
from stacklens.control.db import session_scope
from stacklens.control.models import utcnow
from stacklens.settings import Settings

SLACK = "https://hooks.slack.com/services/T000/B000/secretpart"


def test_create_list_show_and_delete(settings: Settings, make_org) -> None:
    acme, other = int(make_org("Acme")["org_id"]), int(make_org("Globex")["org_id"])
    with session_scope(settings) as session:
        slack, no_secret = create_channel(session, acme, settings, type="slack", name=" Team ", url=SLACK)
        hook, secret = create_channel(
            session, acme, settings, type="webhook", name="Ops", url="https://ops.example/hook"
        )
        mail, _ = create_channel(
            session, acme, settings, type="email", name="Mail", to="a@example.test, b@example.test"
        )
        assert no_secret is None and secret is not None and secret.startswith("whsec_")
        assert slack.name == "Team"
        # A Slack hook's path is its credential: lists show the host only.
        assert [target_text(c) for c in (slack, hook, mail)] == [
            "https://hooks.slack.com/…",
            "https://ops.example/hook",
            "a@example.test, b@example.test",
        ]
        assert {c.id for c in list_channels(session, acme)} == {slack.id, hook.id, mail.id}
        with pytest.raises(AlertNotFound):
            get_channel(session, other, slack.id)
        delete_channel(session, acme, slack.id)
        assert slack.id not in {c.id for c in list_channels(session, acme)}


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"type": "pager", "name": "x", "url": SLACK}, "type"),
        ({"type": "slack", "name": " ", "url": SLACK}, "name"),
        ({"type": "webhook", "name": "x", "url": "ftp://ops.example/"}, "url"),
        ({"type": "webhook", "name": "x", "url": "http://169.254.169.254/latest"}, "url"),
        ({"type": "email", "name": "x", "to": "not an address"}, "to"),
    ],
)
def test_bad_input_names_the_field(settings: Settings, make_org, kwargs: dict, field: str) -> None:
    org = int(make_org()["org_id"])
    with session_scope(settings) as session, pytest.raises(AlertInputError) as refused:
        create_channel(session, org, settings, **kwargs)
    assert refused.value.field == field


def test_health_from_the_last_deliveries(settings: Settings, make_org) -> None:
    org = int(make_org()["org_id"])
    with session_scope(settings) as session:
        channel, _ = create_channel(session, org, settings, type="slack", name="Team", url=SLACK)
        assert health(channel).badge == "untested"
        now = utcnow()
        channel.last_success_at = now
        assert health(channel).badge == "healthy"
        channel.last_failure_at, channel.consecutive_failures = now + timedelta(seconds=1), 3
        assert (health(channel).badge, health(channel).text) == ("failing", "3 failure(s) in a row")
        channel.paused_at, channel.pause_reason = now, "404 Not Found"
        assert health(channel).text == "paused after repeated permanent failures: 404 Not Found"
