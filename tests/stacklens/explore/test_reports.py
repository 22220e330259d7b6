"""Scheduled reports end to end at a fixed clock: the demo-shaped dashboard's summary and a saved query's
CSV are put in the outbox when due (not before), delivered through a real SMTP server on loopback with
their numbers — each the widget's own answer — and the subscription's next run set; a subscription whose
saved query is deleted goes with it."""

from __future__ import annotations

import email
import email.policy
from collections.abc import Iterator
from datetime import timedelta

import pytest

from stacklens.alerts import outbox
from stacklens.control.channels import create_channel
from stacklens.control.db import session_scope
from stacklens.control.models import Subscription
from stacklens.explore.dashboards import create_dashboard
from stacklens.explore.reports import send_due
from stacklens.explore.saved import create_saved, delete_saved
from stacklens.explore.subscriptions import create_subscription
from stacklens.explore.widgets import answer_widgets
from stacklens.settings import Settings
from stacklens.view_filters import ViewFilters
from tests.stacklens.alerts.helpers import MailSink, start_smtp
from tests.stacklens.performance.perf_seed import NOW, migrated, page_loads_in, seed

LCP = {"dataset": "pageloads", "aggregates": [{"fn": "p75", "metric": "lcp_ms"}]}
BEFORE = NOW - timedelta(hours=4, minutes=30)  # 07:30 UTC on the seed's last day; the report is due at 08:00


@pytest.fixture
def sink() -> Iterator[MailSink]:
    sink = MailSink()
    controller = start_smtp(sink)
    sink.port = controller.port  # type: ignore[attr-defined]
    yield sink
    controller.stop()


def _text(envelope) -> tuple[str, str]:
    mail = email.message_from_bytes(envelope.original_content, policy=email.policy.default)
    body = next(p for p in mail.walk() if p.get_content_type() == "text/plain").get_content()
    return str(mail["Subject"]), body


def test_reports_reach_a_real_smtp_server_when_due(settings: Settings, make_org, sink: MailSink) -> None:
    smtp = f"smtp://127.0.0.1:{sink.port}"  # type: ignore[attr-defined]
    settings = settings.model_copy(update={"smtp_url": smtp, "mail_from": "reports@acme.test"})
    acme = make_org("Acme")
    org = int(acme["org_id"])
    client = migrated(settings)
    data = seed(client, org, int(acme["project_id"]), loads=120)
    widgets = [
        {"title": "LCP p75", "kind": "number", "query": LCP},
        {"title": "LCP by release", "kind": "table", "query": {**LCP, "group_by": ["release"]}},
    ]
    with session_scope(settings) as session:
        board = create_dashboard(
            session, org, {"name": "Vitals", "filters": {"range": "7d"}, "widgets": widgets}
        )
        saved = create_saved(
            session,
            org,
            {
                "name": "Loads by browser",
                "query": {"dataset": "pageloads", "group_by": ["browser"], "range": "7d"},
            },
        )
        gone = create_saved(session, org, {"name": "Gone", "query": LCP})
        channel, _ = create_channel(session, org, settings, type="email", name="team", to=["team@acme.test"])
        schedule = {"every": "day", "at": "08:00", "timezone": "UTC"}
        daily = create_subscription(
            session,
            org,
            {"target": {"dashboard_id": board.id}, "schedule": schedule, "channel_id": channel.id},
            now=BEFORE,
        )
        csv = create_subscription(
            session,
            org,
            {
                "target": {"saved_query_id": saved.id},
                "schedule": schedule,
                "format": "csv",
                "channel_id": channel.id,
            },
            now=BEFORE,
        )
        broken = create_subscription(
            session,
            org,
            {"target": {"saved_query_id": gone.id}, "schedule": schedule, "channel_id": channel.id},
            now=BEFORE,
        )
        ids = daily.id, csv.id, broken.id
    with session_scope(settings) as session:
        # The saved query goes away after the subscription was made: its row goes too (ON DELETE CASCADE).
        delete_saved(session, org, gone.id)
    assert (
        send_due(settings, client, "http://sl.test", BEFORE + timedelta(minutes=29)).sent == 0
    )  # 07:59: not yet
    at = BEFORE + timedelta(minutes=31)  # 08:01
    summary = send_due(settings, client, "http://sl.test", at)
    assert (summary.sent, summary.failed) == (2, 0)
    assert outbox.drain(settings).delivered == 2
    mails = dict(_text(e) for e in sink.messages)
    assert set(mails) == {"Daily report: Vitals", "Daily report: Loads by browser"}
    # The summary's number is the widget's own answer at the same time, with its change.
    with session_scope(settings) as session:
        number, table = answer_widgets(client, session, org, board.widgets, board.filters, at)
        rows = {s.id: (s.next_run_at, s.last_run_at, s.last_error) for s in session.query(Subscription)}
    text = mails["Daily report: Vitals"]
    lcp = f"{number.number:,.1f} ms"
    change = f"{number.change_pct:+,.1f} % vs the previous period ({number.previous_number:,.1f} ms)"
    # LCP is not a percentage: its change is relative, written "%" (a percentage's is "pp").
    assert f"LCP p75: {lcp} — {change}" in text, text
    assert "LCP by release:" in text and f"release={table.result.rows[0]['release']}" in text
    assert "Open the dashboard: http://sl.test/orgs/" in text and f"/dashboards/{board.id}" in text
    lines = mails["Daily report: Loads by browser"].strip().splitlines()
    assert lines[0] == "widget,group,column,value,previous,change_pct"
    counts = [line.split(",") for line in lines[1:]]
    window = ViewFilters.parse(since=(at - timedelta(days=7)).isoformat(), until=at.isoformat())
    assert {c[2] for c in counts} == {"count"} and sum(int(c[3]) for c in counts) == len(
        page_loads_in(data, window)
    )
    # Each ran once and waits for tomorrow's 08:00; the one whose query went is gone with it.
    assert set(rows) == {ids[0], ids[1]}
    for next_run, last_run, error in rows.values():
        assert (next_run, last_run, error) == (at.replace(hour=8, minute=0) + timedelta(days=1), at, "")
    assert send_due(settings, client, "http://sl.test", at + timedelta(hours=1)).sent == 0


def test_a_dashboard_as_pdf_reaches_a_real_smtp_server(settings: Settings, make_org, sink: MailSink) -> None:
    """The PDF format: the dashboard rendered (its number with its change, a line, bars and a table)
    attached to the e-mail, sent through the outbox with its delivery log at a fixed clock; its text holds
    each widget's own answer; its pages are rendered to PNG (tests/_artifacts/reports) to be looked at."""
    import subprocess

    from sqlalchemy import select

    from stacklens.control.models.alerts import AlertDelivery
    from stacklens.explore.subscriptions import BadSubscription
    from tests.browser import shots_dir

    smtp = f"smtp://127.0.0.1:{sink.port}"  # type: ignore[attr-defined]
    settings = settings.model_copy(update={"smtp_url": smtp, "mail_from": "reports@acme.test"})
    acme = make_org("Acme")
    org = int(acme["org_id"])
    client = migrated(settings)
    seed(client, org, int(acme["project_id"]), loads=120)
    count = {"dataset": "pageloads", "aggregates": [{"fn": "count"}]}
    widgets = [
        {"title": "LCP p75", "kind": "number", "query": LCP},
        {"title": "Page loads per day", "kind": "line", "query": {**count, "interval": "1d"}},
        {"title": "Page loads by browser", "kind": "bar", "query": {**count, "group_by": ["browser"]}},
        {"title": "LCP by release", "kind": "table", "query": {**LCP, "group_by": ["release"]}},
    ]
    with session_scope(settings) as session:
        board = create_dashboard(
            session, org, {"name": "Release health", "filters": {"range": "7d"}, "widgets": widgets}
        )
        saved = create_saved(session, org, {"name": "Q", "query": LCP})
        channel, _ = create_channel(session, org, settings, type="email", name="team", to=["team@acme.test"])
        schedule = {"every": "week", "weekday": NOW.strftime("%A").lower(), "at": "08:00", "timezone": "UTC"}
        body = {"schedule": schedule, "format": "pdf", "channel_id": channel.id}
        with pytest.raises(BadSubscription) as refused:
            create_subscription(session, org, {**body, "target": {"saved_query_id": saved.id}}, now=BEFORE)
        assert refused.value.field == "format"
        create_subscription(session, org, {**body, "target": {"dashboard_id": board.id}}, now=BEFORE)
    at = BEFORE + timedelta(minutes=31)  # 08:01
    assert send_due(settings, client, "http://sl.test", at).sent == 1
    assert outbox.drain(settings).delivered == 1
    with session_scope(settings) as session:
        (delivery,) = session.scalars(select(AlertDelivery)).all()
        assert delivery.outcome == "delivered"  # the outbox's log of the delivery
        number, line, bars, table = answer_widgets(client, session, org, board.widgets, board.filters, at)
    (envelope,) = sink.messages
    mail = email.message_from_bytes(envelope.original_content, policy=email.policy.default)
    assert mail["Subject"] == "Weekly report: Release health"
    (attached,) = [p for p in mail.walk() if p.get_content_type() == "application/pdf"]
    assert attached.get_filename() == f"release-health-{at:%Y-%m-%d}.pdf"
    pdf = attached.get_content()
    assert pdf.startswith(b"%PDF-")
    text_part = next(p for p in mail.walk() if p.get_content_type() == "text/plain").get_content()
    assert "The dashboard as PDF: release-health-" in text_part
    out = shots_dir("reports")
    out.mkdir(parents=True, exist_ok=True)
    path = out / "dashboard-report.pdf"
    path.write_bytes(pdf)
    text = subprocess.run(
        ["pdftotext", "-layout", str(path), "-"], check=True, capture_output=True, text=True
    ).stdout
    change = f"{number.change_pct:+,.1f} % vs the previous period ({number.previous_number:,.1f} ms)"
    # LCP is not a percentage: its change is relative, written "%" (a percentage's is "pp").
    assert "Dashboard: Release health" in text and f"LCP p75: {number.number:,.1f} ms" in text, text
    assert change in text, text
    assert "Page loads per day" in text and "Page loads by browser - Count" in text, text
    assert "left: Count" in text, text  # the line's axis, and its legend names the aggregate
    # The bars and the table: each group with its own value, as the widgets answer them.
    for row in bars.result.rows:
        assert f"browser={row['browser']}" in text and f"{row['count']:,}" in text, (row, text)
    for row in table.result.rows:
        assert row["release"] in text and f"{row['lcp_p75_ms']:,.1f} ms" in text, (row, text)
    # The line spans the whole window (the last 7d), not the days that hold data.
    assert line.query is not None
    since = line.query.window.since
    assert f"{since:%Y-%m-%d}" in text and f"{at:%Y-%m-%d}" in text, text
    assert "Page 1 of" in text
    subprocess.run(["pdftoppm", "-png", "-r", "60", str(path), str(out / "dashboard-report")], check=True)
    assert list(out.glob("dashboard-report-*.png"))
