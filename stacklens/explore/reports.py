"""A subscription's report, built and put in the outbox (:mod:`stacklens.explore.subscriptions`): each due
subscription's dashboard (every widget under the dashboard's own filters) or saved query is answered now
and worded as a summary — the key numbers with their change against the previous period, and the first rows
of each other widget — as CSV (one row per widget, group and column, SQL widgets' too, cells neutralised
against formulas, in the message body), or as the summary with the dashboard rendered as a PDF
(:mod:`stacklens.explore.report_pdf`) that e-mail attaches (chat and webhook channels send the summary and
the link). One outbox row per report, then the next run is set; a report that cannot be built records its
error on the subscription and waits for its next run.

Reports run in the one schedule runner beside every organization's alerts: a report is claimed (its next
run moved on, in a short transaction), rendered with nothing written, then recorded in the outbox in a short
transaction, so no control-store write lock is held while a report renders; each organization has at most
:data:`REPORTS_PER_ORG` reports and :data:`ORG_BUDGET_S` seconds of a run, the rest staying due for the
next run. A process that stops mid-render loses that one run of that report (it was claimed; its next run
comes as scheduled): a report is never sent twice."""

from __future__ import annotations

import base64
import html
import re
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from clickhouse_connect.driver.client import Client
from sqlalchemy import update
from sqlalchemy.orm import Session

from stacklens.alerts.outbox import enqueue
from stacklens.control.db import session_scope
from stacklens.control.models import Organization, SavedQuery, Subscription
from stacklens.csv_cells import csv_text
from stacklens.errors import StackLensError
from stacklens.explore import dashboards
from stacklens.explore.columns import AGGREGATE, columns_of
from stacklens.explore.dashboard_variables import (
    empty_variables,
    no_values,
    variable_options,
    variables_of,
    with_variables,
)
from stacklens.explore.report_pdf import dashboard_pdf
from stacklens.explore.sql_widgets import sql_csv_rows, sql_summary
from stacklens.explore.subscriptions import due, schedule_of
from stacklens.explore.widget_change import change_of
from stacklens.explore.widget_kinds import gauge_budgets
from stacklens.explore.widgets import WidgetAnswer, answer_widgets
from stacklens.settings import Settings

ROWS_IN_SUMMARY = 3
CSV_COLUMNS = ("widget", "group", "column", "value", "previous", "change_pct")


# One organization's share of a run of the step (the alerts job runs every minute): at most this many
# reports and seconds; the rest stay due for the next run. 198 reports of one organization rendered in one
# run held every organization's alerts for 76 s (issue 62).
REPORTS_PER_ORG = 10
ORG_BUDGET_S = 10.0
# The step's own share of a run, whatever the number of organizations.
RUN_BUDGET_S = 20.0


@dataclass
class ReportSummary:
    sent: int = 0
    failed: int = 0
    # Due but left for the next run: their organization's share (or the run's) was spent.
    deferred: int = 0
    errors: list[str] = field(default_factory=list)


def _widget_lines(answer: WidgetAnswer) -> list[str]:
    if "sql" in answer.widget:  # a SQL panel: its number or first rows (stacklens.explore.sql_widgets)
        return sql_summary(answer, ROWS_IN_SUMMARY)
    title = answer.widget["title"]
    if answer.widget.get("no_values"):
        return [f"{title}: no values: {answer.widget['no_values']}"]
    if answer.error:
        return [f"{title}: not answered ({answer.error})"]
    if answer.query is None or answer.result is None or not answer.result.rows:
        return [f"{title}: no data in this window"]
    aggregates = [c for c in columns_of(answer.query) if c.kind == AGGREGATE]
    column = aggregates[0]
    if answer.widget["kind"] in ("number", "gauge"):
        change = change_of(answer.query.aggregates[0], answer.number, answer.previous_number)
        before = (
            f"{change.text} vs the previous period ({column.format(answer.previous_number)})"
            if change is not None
            else "no previous value to compare with"
        )
        return [f"{title}: {column.format(answer.number)} — {before}"]
    lines = [f"{title}:"]
    for row in answer.result.rows[:ROWS_IN_SUMMARY]:
        group = ", ".join(f"{g}={row[g]}" for g in answer.query.group_by) or "all"
        # Every aggregate the widget draws, not only its first (a "LCP p75 by release" line said "Count").
        values = ", ".join(f"{c.header} {c.format(row.get(c.key))}" for c in aggregates)
        lines.append(f"  {group}: {values}")
    return lines


def _csv_rows(answers: list[WidgetAnswer]) -> list[dict[str, Any]]:
    out = []
    for answer in answers:
        if "sql" in answer.widget:  # a SQL panel: its rows and columns (stacklens.explore.sql_widgets)
            out += sql_csv_rows(answer)
            continue
        if answer.query is None or answer.result is None or answer.widget.get("no_values"):
            continue  # no values for its variable: its rows would be every value's
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


def report_widgets(
    client: Client, session: Session, org_id: int, board: dashboards.Board, now: datetime
) -> tuple[list[dict[str, Any]], str]:
    """``(widgets, named)``: the dashboard's widgets as its report answers them — its variables at their
    defaults, as its page opens (:mod:`stacklens.explore.dashboard_variables`), and a widget using a variable
    without values in the window marked ``no_values`` (it says so, as on the page, rather than draw every
    value under the variable's name) — and the variables' values in words."""
    variables = variables_of(board.variables)
    chosen = {v.name: v.default for v in variables}
    widgets = with_variables(session, org_id, board.widgets, variables, chosen)
    if variables:
        options = variable_options(client, session, org_id, variables, widgets, board.filters, now)
        empty = empty_variables(variables, options)
        widgets = [{**w, "no_values": text} if (text := no_values(w, empty)) else w for w in widgets]
    return widgets, ", ".join(f"${k} = {v or 'all'}" for k, v in chosen.items())


def build_report(
    client: Client, session: Session, row: Subscription, base_url: str, now: datetime
) -> dict[str, Any]:
    """The outbox payload of the subscription's report: subject, text, html, link and data."""
    named = ""
    if row.dashboard_id:
        board = dashboards.get_dashboard(session, row.org_id, row.dashboard_id)
        name, filters = board.name, board.filters
        widgets, named = report_widgets(client, session, row.org_id, board, now)
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
    scope += f" ({named})" if named else ""
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
            budgets = gauge_budgets(session, row.org_id, filters.get("project", ""), answers)
            pdf = dashboard_pdf(name, scope, answers, link, now, _widget_lines, budgets)
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


def send_due(
    settings: Settings,
    client: Client,
    base_url: str,
    now: datetime | None = None,
    *,
    per_org: int = REPORTS_PER_ORG,
    org_budget_s: float = ORG_BUDGET_S,
    run_budget_s: float = RUN_BUDGET_S,
) -> ReportSummary:
    """Put due subscriptions' reports in the outbox and set their next runs; each subscription on its own
    (one that fails records its error and waits for its next run).

    Each organization has at most ``per_org`` reports and ``org_budget_s`` seconds of a run, the run at most
    ``run_budget_s``; what is left stays due for the next run (the organization whose report is due longest
    first). A report is claimed, rendered and recorded in three steps, and only the first and last write:
    the claim moves the subscription's next run on (so no other run sends it again), the report is rendered
    with no transaction writing, and the outbox row goes in in a short transaction of its own."""
    now = now or datetime.now(UTC)
    summary = ReportSummary()
    with session_scope(settings) as session:
        found = [(row.org_id, row.id) for row in due(session, now)]
    by_org: dict[int, list[int]] = {}
    for org_id, subscription_id in found:
        by_org.setdefault(org_id, []).append(subscription_id)
    run_deadline = time.monotonic() + run_budget_s
    for ids in by_org.values():
        deadline = min(time.monotonic() + org_budget_s, run_deadline)
        taken = 0
        for subscription_id in ids:
            if taken >= per_org or time.monotonic() >= deadline:
                summary.deferred += 1
                continue
            if not _claim(settings, subscription_id, now):
                continue  # not due any more: paused, deleted, or claimed by another run
            taken += 1
            _render_and_record(settings, client, subscription_id, base_url, now, summary)
    return summary


def _claim(settings: Settings, subscription_id: int, now: datetime) -> bool:
    """Move the subscription's next run on if it is still due (a conditional update: of two runs claiming
    the same report, one wins); whether this run got it."""
    with session_scope(settings) as session:
        row = session.get(Subscription, subscription_id)
        if row is None or row.paused or row.next_run_at > now:
            return False
        claimed = session.execute(
            update(Subscription)
            .where(
                Subscription.id == subscription_id,
                Subscription.next_run_at == row.next_run_at,
                Subscription.paused.is_(False),
            )
            .values(next_run_at=schedule_of(row).next_run(now), last_run_at=now)
            .execution_options(synchronize_session=False)
        )
        return bool(getattr(claimed, "rowcount", 0) == 1)


def _render_and_record(
    settings: Settings,
    client: Client,
    subscription_id: int,
    base_url: str,
    now: datetime,
    summary: ReportSummary,
) -> None:
    error = ""
    payload: dict[str, Any] = {}
    # Rendering only reads the control store: no write lock is held while the widgets are answered and the
    # PDF drawn (a report took seconds; another organization's write waited behind it and got 503).
    with session_scope(settings) as session:
        row = session.get(Subscription, subscription_id)
        if row is None:  # deleted since it was claimed
            return
        try:
            payload = build_report(client, session, row, base_url, now)
        except Exception as exc:  # noqa: BLE001 - one subscription's failure is its own, recorded on it
            error = str(exc)
    with session_scope(settings) as session:
        row = session.get(Subscription, subscription_id)
        if row is None:
            return
        if error:
            row.last_error = error[:500]
            summary.failed += 1
            summary.errors.append(f"subscription {row.id}: {error}")
            return
        enqueue(session, row.org_id, [row.channel_id], "report", payload)
        row.last_error = ""
        summary.sent += 1
