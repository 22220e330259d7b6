"""Failed pipeline ticks, counted: the third in a row alerts the owners once (a real SMTP server), later
failures add nothing, and the next good tick sends the recovery note."""

from __future__ import annotations

from email import message_from_bytes
from email.policy import default

from stacklens.control.channels import create_channel
from stacklens.control.db import session_scope
from stacklens.self_watch.pipeline_ticks import PipelineTicks
from stacklens.settings import Settings, override_settings
from tests.stacklens.alerts.helpers import MailSink, start_smtp


def test_three_failed_ticks_alert_once_and_a_good_one_recovers(settings: Settings, make_org) -> None:
    sink = MailSink()
    smtp = start_smtp(sink)
    try:
        current = settings.model_copy(update={"smtp_url": f"smtp://127.0.0.1:{smtp.port}"})
        override_settings(current)
        org = make_org()
        with session_scope(current) as session:
            create_channel(
                session, int(org["org_id"]), current, type="email", name="ops", to=["ops@acme.test"]
            )
        ticks = PipelineTicks(current)
        ticks.record(["issues_job: table events does not exist"])
        ticks.record(["issues_job: table events does not exist"])
        assert sink.messages == []
        ticks.record(["issues_job: table events does not exist"])
        ticks.record(["issues_job: table events does not exist"])
        assert len(sink.messages) == 1
        alert = message_from_bytes(sink.messages[0].content, policy=default)
        assert "Pipelines failing: three ticks in a row" in alert["subject"]
        assert "issues_job: table events does not exist" in alert.get_body(("plain",)).get_content()
        # A restarted server (a new counter) knows the episode is open: no second alert, one recovery.
        restarted = PipelineTicks(current)
        for _ in range(3):
            restarted.record(["issues_job: still failing"])
        assert len(sink.messages) == 1
        restarted.record([])
        restarted.record([])
        assert len(sink.messages) == 2
        assert "[Resolved]" in message_from_bytes(sink.messages[1].content, policy=default)["subject"]
    finally:
        smtp.stop()
