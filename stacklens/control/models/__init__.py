"""The control store's tables (SQLAlchemy 2), one module per topic, all on one metadata (one Alembic history).

:mod:`~stacklens.control.models.base` holds the declarative base and the UTC timestamp type;
:mod:`~stacklens.control.models.accounts` organizations, people, projects, keys, sessions and invitations;
:mod:`~stacklens.control.models.budgets`, :mod:`~stacklens.control.models.share_links`,
:mod:`~stacklens.control.models.alerts`, :mod:`~stacklens.control.models.explore` and
:mod:`~stacklens.control.models.integrations` the tables of their topic. Importing this package registers
every table on ``Base.metadata`` (what ``stacklens/control/migrations/env.py`` compares against) and re-exports
each of them. Schema changes go through Alembic revisions in ``stacklens/control/migrations``.
"""

from __future__ import annotations

from stacklens.control.models.accounts import (
    ActivityEntry,
    ApiKey,
    AppKey,
    Invitation,
    KeyUsage,
    Membership,
    Organization,
    Project,
    User,
    UserSession,
)
from stacklens.control.models.alerts import (
    AlertChannel,
    AlertDelivery,
    AlertEvaluation,
    AlertNotification,
    AlertRule,
    AlertRuleState,
)
from stacklens.control.models.base import Base, UtcDateTime, iso_utc, utcnow
from stacklens.control.models.budgets import Budget
from stacklens.control.models.explore import SavedQuery
from stacklens.control.models.integrations import ExternalLink, TrackerConnection
from stacklens.control.models.share_links import ShareLink

__all__ = [
    "ActivityEntry",
    "AlertChannel",
    "AlertDelivery",
    "AlertEvaluation",
    "AlertNotification",
    "AlertRule",
    "AlertRuleState",
    "ApiKey",
    "AppKey",
    "Base",
    "Budget",
    "ExternalLink",
    "Invitation",
    "KeyUsage",
    "Membership",
    "Organization",
    "Project",
    "SavedQuery",
    "ShareLink",
    "TrackerConnection",
    "User",
    "UserSession",
    "UtcDateTime",
    "iso_utc",
    "utcnow",
]
