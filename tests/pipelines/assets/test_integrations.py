"""The integrations asset in the real pipelines: a run of ``tracker_ticket_states`` reads a linked ticket's
state from a (local, strict) tracker and resolves the issue whose connection asks for it."""

from __future__ import annotations

from pipelines.definitions import definitions_for
from pipelines.embedded import materialize_now
from stacklens.control.db import session_scope
from stacklens.control.integrations import create_connection
from stacklens.integrations.links import create_link
from stacklens.integrations.prefill import Draft
from stacklens.issues.reads import issue_summary
from stacklens.settings import override_settings
from tests.dashboards.landing import land, sdk_event
from tests.stacklens.alerts.helpers import org_with_project
from tests.stacklens.integrations import fake_trackers as ft


def _fail() -> None:
    raise LookupError("sku missing")


def test_a_run_reads_ticket_states_and_resolves_the_issue(client, instance, settings) -> None:
    allowed = settings.model_copy(update={"outbound_allow": "127.0.0.1"})
    override_settings(allowed)
    fake = ft.FakeTrackers().start()
    try:
        org_id, project_id, _slug = org_with_project(allowed)
        with session_scope(allowed) as session:
            body = {"type": "linear", "base_url": fake.url, "token": ft.LINEAR_KEY, "resolve_on_close": True}
            connection_id = create_connection(session, org_id, allowed, body).id
        (row,) = land(org_id, project_id, [sdk_event(_fail)])
        issue_id = int(row["issue_id"])
        draft = Draft("LookupError: sku missing", "", {"title": "LookupError"}, "", "https://sl.test/i")
        link = create_link(allowed, org_id, project_id, issue_id, connection_id, "ENG", draft).link
        assert link["key"] == "ENG-1"
        fake.close_ticket("ENG-1")
        outcomes = materialize_now(definitions_for(allowed), instance, ["tracker_ticket_states"])
        assert all(o.success for o in outcomes), [o.error for o in outcomes]
        integrations = next(o for o in outcomes if o.job == "integrations_job")
        assert integrations.assets["tracker_ticket_states"] == 1
        assert issue_summary(client, org_id, project_id, issue_id)["status"] == "resolved"
        assert fake.violations == []
    finally:
        fake.stop()
        override_settings(None)
