"""Episodes are shared through the control store: two processes (two watches) opening the same condition send
one alert per channel, and one recovery note; every organization's channels hear it."""

from __future__ import annotations

from stacklens.control.channels import create_channel
from stacklens.control.db import session_scope
from stacklens.self_watch.episodes import firing_conditions, set_firing
from stacklens.settings import Settings, override_settings
from tests.stacklens.alerts.helpers import MailSink, start_smtp


def test_an_episode_alerts_once_across_processes_and_recovers_once(settings: Settings, make_org) -> None:
    sink = MailSink()
    smtp = start_smtp(sink)
    try:
        current = settings.model_copy(update={"smtp_url": f"smtp://127.0.0.1:{smtp.port}"})
        override_settings(current)
        orgs = [make_org("Acme"), make_org("Globex")]
        with session_scope(current) as session:
            for org in orgs:
                create_channel(
                    session, int(org["org_id"]), current, type="email", name="ops", to=["ops@x.test"]
                )
        first = set_firing(current, "ingest_refused_disk", True, "1.0 MiB free, below 2.0 MiB")
        second = set_firing(current, "ingest_refused_disk", True, "1.0 MiB free, below 2.0 MiB")
        assert len(first) == 2 and second == []
        assert firing_conditions(current) == {"ingest_refused_disk"}
        assert len(sink.messages) == 2
        assert set_firing(current, "ingest_refused_disk", False, "clear again") != []
        assert set_firing(current, "ingest_refused_disk", False, "clear again") == []
        assert firing_conditions(current) == set()
        assert len(sink.messages) == 4
    finally:
        smtp.stop()
