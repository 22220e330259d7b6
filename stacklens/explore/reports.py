"""A subscription's report, built and put in the outbox (:mod:`stacklens.explore.subscriptions`): each due
subscription's dashboard (every widget under the dashboard's own filters) or saved query is answered now
and worded as a summary — the key numbers with their change against the previous period, and the first rows
of each other widget — as CSV (one row per widget, group and column, cells neutralised against formulas, in
the message body), or as the summary with the dashboard rendered as a PDF
(:mod:`stacklens.explore.report_pdf`) that e-mail attaches (chat and webhook channels send the summary and
the link). One outbox row per report, then the next run is set; a report that cannot be built records its
error on the subscription and waits for its next run."""

from __future__ import annotations

import base64
import html
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from clickhouse_connect.driver.client import Client
from sqlalchemy.orm import Session

from stacklens.alerts.outbox import enqueue
from stacklens.control.db import session_scope
from stacklens.control.models import Organization, SavedQuery, Subscription
from stacklens.csv_cells import csv_text
from stacklens.errors import StackLensError
from stacklens.explore import dashboards
from stacklens.explore.columns import AGGREGATE, columns_of
from stacklens.explore.report_pdf import dashboard_pdf
from stacklens.explore.subscriptions import due, schedule_of
from stacklens.explore.widgets import WidgetAnswer, answer_widgets
from stacklens.settings import Settings

ROWS_IN_SUMMARY = 3
CSV_COLUMNS = ("widget", "group", "column", "value", "previous", "change_pct")


@dataclass
class ReportSummary:
    sent: int = 0
    failed: int = 0
    errors: list[str] = field(default_factory=list)


def _widget_lines(answer: WidgetAnswer) -> list[str]:
    title = answer.widget["title"]
    if answer.error:
        return [f"{title}: not answered ({answer.error})"]
    if answer.query is None or answer.result is None or not answer.result.rows:
        return [f"{title}: no data in this window"]
    column = next(c for c in columns_of(answer.query) if c.kind == AGGREGATE)
    if answer.widget["kind"] == "number":
        change = answer.change_pct
        before = (
            f"{change:+,.1f} % vs the previous period ({column.format(answer.previous_number)})"
            if change is not None
            else "no previous value to compare with"
        )
        return [f"{title}: {column.format(answer.number)} — {before}"]
    lines = [f"{title}:"]
    for row in answer.result.rows[:ROWS_IN_SUMMARY]:
        group = ", ".join(f"{g}={row[g]}" for g in answer.query.group_by) or "all"
        lines.append(f"  {group}: {column.header} {column.format(row[column.key])}")
    return lines


def _csv_rows(answers: list[WidgetAnswer]) -> list[dict[str, Any]]:
    out = []
    for answer in answers:
        if answer.query is None or answer.result is None:
            continue
        previous = (
            {answer.query.aggregates[0].column: answer.previous_number}
            if answer.widget["kind"] == "number"
            else {}
        )
        for row in answer.result.rows:
            group = ", ".join(f"{g}={row[g]}" for g in answer.query.group_by)
            for aggregate in answer.query.aggregates:
                key = aggregate.column
                before = row.get(key + "_previous", previous.get(key))
                change = row.get(key + "_change_pct", answer.change_pct if previous else None)
                out.append(
                    {
                        "widget": answer.widget["title"],
                        "group": group,
                        "column": key,
                        "value": row.get(key),
                        "previous": before,
                        "change_pct": change,
                    }
                )
    return out


def build_report(
    client: Client, session: Session, row: Subscription, base_url: str, now: datetime
) -> dict[str, Any]:
    """The outbox payload of the subscription's report: subject, text, html, link and data."""
    if row.dashboard_id:
        board = dashboards.get_dashboard(session, row.org_id, row.dashboard_id)
        name, widgets, filters = board.name, board.widgets, board.filters
        link = f"{base_url.rstrip('/')}/orgs/{_org_slug(session, row.org_id)}/dashboards/{board.id}"
    else:
        saved = session.get(SavedQuery, row.saved_query_id)
        if saved is None or saved.org_id != row.org_id:
            raise StackLensError(f"the saved query {row.saved_query_id} is gone")
        name = saved.name
        widgets = [
            {
                "title": saved.name,
                "kind": "table",
                "saved_query_id": saved.id,
                "layout": {"x": 0, "y": 0, "w": 12, "h": 2},
            }
        ]
        window = saved.query.get("range") or "7d"
        filters = {
            "range": window if window in ("24h", "7d", "14d", "30d", "90d") else "7d",
            "environment": "",
            "release": "",
            "project": "",
        }
        link = f"{base_url.rstrip('/')}/orgs/{_org_slug(session, row.org_id)}/explore"
    answers = answer_widgets(client, session, row.org_id, widgets, filters, now)
    period = "Daily" if row.every == "day" else "Weekly"
    subject = f"{period} report: {name}"
    scope = f"{filters['range']}" + (f", {filters['environment']}" if filters.get("environment") else "")
    attachments: list[dict[str, str]] = []
    if row.format == "csv":
        text = csv_text(CSV_COLUMNS, _csv_rows(answers))
        body_html = f"<pre>{html.escape(text)}</pre>"
    else:
        lines = [f"{name} — the last {scope}, as of {now.astimezone(UTC):%Y-%m-%d %H:%M} UTC", ""]
        for answer in answers:
            lines += _widget_lines(answer)
        lines += ["", f"Open the dashboard: {link}"]
        if row.format == "pdf":
            # The summary is the message (chat and webhook channels send it alone); e-mail attaches the PDF.
            pdf = dashboard_pdf(name, scope, answers, link, now, _widget_lines)
            stamp = now.astimezone(UTC).strftime("%Y-%m-%d")
            filename = f"{_file_name(name)}-{stamp}.pdf"
            attachments.append(
                {
                    "filename": filename,
                    "content_type": "application/pdf",
                    "base64": base64.b64encode(pdf).decode(),
                }
            )
            lines += [f"The dashboard as PDF: {filename} (attached to e-mail reports)."]
        text = "\n".join(lines)
        body_html = "<pre>" + html.escape(text) + "</pre>"
    return {
        "subject": subject,
        "text": text,
        "html": body_html,
        "link": link,
        "data": {"subscription_id": row.id, "format": row.format, "name": name, "range": filters["range"]},
        **({"attachments": attachments} if attachments else {}),
    }


def _file_name(name: str) -> str:
    """The dashboard's name as a file name: letters, digits and dashes."""
    return re.sub(r"[^A-Za-z0-9]+", "-", name).strip("-").lower()[:60] or "dashboard"


def _org_slug(session: Session, org_id: int) -> str:
    org = session.get(Organization, org_id)
    return org.slug if org is not None else str(org_id)


def send_due(settings: Settings, client: Client, base_url: str, now: datetime | None = None) -> ReportSummary:
    """Put every due subscription's report in the outbox and set its next run; each subscription on its own
    (one that fails records its error and waits for its next run)."""
    now = now or datetime.now(UTC)
    summary = ReportSummary()
    with session_scope(settings) as session:
        ids = [row.id for row in due(session, now)]
    for subscription_id in ids:
        with session_scope(settings) as session:
            row = session.get(Subscription, subscription_id)
            if row is None:
                continue
            row.last_run_at = now
            row.next_run_at = schedule_of(row).next_run(now)
            try:
                payload = build_report(client, session, row, base_url, now)
            except Exception as exc:  # noqa: BLE001 - one subscription's failure is its own, recorded on it
                row.last_error = str(exc)[:500]
                summary.failed += 1
                summary.errors.append(f"subscription {row.id}: {exc}")
                continue
            enqueue(session, row.org_id, [row.channel_id], "report", payload)
            row.last_error = ""
            summary.sent += 1
    return summary
