"""Whether a pass of the embedded runner has anything to do, decided without Dagster and, while nothing has
called the warehouse, without the engine (issue 63: an idle server on an empty warehouse within 300 MiB).

Importing Dagster and the definitions costs the server ~54 MiB for as long as it runs, and each pass's plans
are statements that map ~75 MiB of the engine's library back into memory. A pass has work when:

- the warehouse is not this process's embedded engine (a ClickHouse server: other processes land rows);
- the control store holds something a job serves whatever lands (:data:`STANDING_WORK`): a cron or uptime
  monitor, an alert rule, a notification waiting in the outbox, a budget, a report subscription, a digest
  item, a weekly summary switched on, a linked ticket;
- rows have landed that a data-driven job has not read: the newest row received (``max_received``) is past
  the oldest of their watermarks. The warehouse is asked only when this process has called it since the last
  answer found nothing: the embedded engine is this process's alone, so every row lands through its clients
  (:func:`stacklens.warehouse.calls.warehouse_calls`).

Otherwise every plan would skip and every job would find nothing to do: the pass is skipped, so a server on an
empty warehouse loads Dagster only at the first pass with data or with standing work.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from sqlalchemy import exists, inspect, select
from sqlalchemy.orm import Session

from pipelines import warehouse_ops as ops
from pipelines.job_inputs import data_driven_watermarks
from stacklens.settings import Settings

logger = logging.getLogger(__name__)


def _standing_work() -> list[tuple[str, Callable[[Session], bool]]]:
    """Per control-store table, whether it holds work a job does whatever lands in the warehouse."""
    from stacklens.control.models.alerts import AlertNotification, AlertRule
    from stacklens.control.models.budgets import Budget
    from stacklens.control.models.dashboards import Subscription
    from stacklens.control.models.integrations import ExternalLink
    from stacklens.control.models.monitors import Monitor
    from stacklens.control.models.teams import DigestItem, NotificationSetting

    def any_row(model: Any, *where: Any) -> Callable[[Session], bool]:
        return lambda session: bool(session.scalar(select(exists().where(*where).select_from(model))))

    return [
        ("monitors", any_row(Monitor)),  # monitors_job: missed check-ins, uptime probes
        ("alert_rules", any_row(AlertRule)),  # alerts_job: rules (absence, anomalies) fire on time alone
        # alerts_job's deliveries: test notifications and the service's own alerts wait here too
        (
            "alert_notifications",
            any_row(AlertNotification, AlertNotification.status.in_(("pending", "sending"))),
        ),
        ("budgets", any_row(Budget)),  # budgets_job: verdicts over windows that move with the clock
        ("report_subscriptions", any_row(Subscription)),  # alerts_job: reports due at a time of day
        ("notification_digest_items", any_row(DigestItem)),  # alerts_job: the daily digests
        (
            "notification_settings",
            any_row(
                NotificationSetting,
                NotificationSetting.kind == "weekly",
                NotificationSetting.mode == "weekly",
            ),
        ),  # alerts_job: the weekly summaries
        ("external_links", any_row(ExternalLink)),  # integrations_job: linked tickets' states
    ]


def standing_work(settings: Settings) -> str | None:
    """The first control-store table holding work a job does whatever lands in the warehouse, or None."""
    from stacklens.control.db import get_engine, session_scope

    tables = set(inspect(get_engine(settings)).get_table_names())
    with session_scope(settings) as session:
        for table, holds_work in _standing_work():
            if table in tables and holds_work(session):
                return table
    return None


def unread_rows(settings: Settings) -> bool:
    """Whether rows have landed that some data-driven job has not read (its plan would request a run)."""
    from stacklens.warehouse.client import get_warehouse

    client = get_warehouse(settings)
    newest = ops.max_received(client)
    if newest is None:
        return False
    return newest > min(ops.get_watermarks(client, data_driven_watermarks()).values())


class IdleCheck:
    """Remembers, per runner, the warehouse calls counted when the warehouse last held nothing unread."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._quiet_at: int | None = None

    def has_work(self) -> bool:
        """Whether the runner's pass may find something to do (see the module's docstring). A check that
        fails says yes: the pass then runs and reports the failure as usual."""
        if not self.settings.embedded_warehouse:
            return True
        from stacklens.warehouse.calls import uncounted, warehouse_calls
        from stacklens.warehouse.engine import release_library_pages

        try:
            table = standing_work(self.settings)
            if table is not None:
                logger.debug("pipelines: %s holds work for the schedules", table)
                self._quiet_at = None
                return True
            calls = warehouse_calls()  # read first: a call ending during the check is counted after it
            if calls == self._quiet_at:
                return False
            with uncounted():
                if unread_rows(self.settings):
                    self._quiet_at = None
                    return True
            self._quiet_at = calls
            # Nothing to do: the pages of the engine's library this check's statements (and the calls before
            # it) mapped back are not needed until the next call; given back now rather than at the
            # half-minute release (a server's first pass runs right after the start's own release).
            release_library_pages()
            return False
        except Exception as exc:  # noqa: BLE001 - the pass runs and reports what fails
            logger.debug("pipelines: the idle check failed (%s); the pass runs", exc)
            self._quiet_at = None
            return True


__all__ = ["IdleCheck", "standing_work", "unread_rows"]
