"""The control store's tables (SQLAlchemy 2), one module per topic, all on one metadata (one Alembic history).

:mod:`~stacklens.control.models.base` holds the declarative base and the UTC timestamp type;
:mod:`~stacklens.control.models.accounts` organizations, people, projects, keys, sessions and invitations;
:mod:`~stacklens.control.models.budgets`, :mod:`~stacklens.control.models.share_links`,
:mod:`~stacklens.control.models.alerts`, :mod:`~stacklens.control.models.explore`,
:mod:`~stacklens.control.models.dashboards` (dashboards, annotations),
:mod:`~stacklens.control.models.integrations`, :mod:`~stacklens.control.models.teams` (teams, assignees,
comments, ownership rules), :mod:`~stacklens.control.models.issue_merges` (merge overrides),
:mod:`~stacklens.control.models.monitors` (monitors, check-ins, incidents),
:mod:`~stacklens.control.models.sso` (company sign-in), :mod:`~stacklens.control.models.agents` (agent
tokens, OAuth clients and codes) and
:mod:`~stacklens.control.models.service` (the service's own alert episodes) the tables of their topic.
Importing this package registers every table on ``Base.metadata`` (what
``stacklens/control/migrations/env.py`` compares against) and re-exports each of them. Schema changes go
through Alembic revisions in ``stacklens/control/migrations``."""

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
from stacklens.control.models.agents import AgentToken, OAuthClient, OAuthCode
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
from stacklens.control.models.dashboards import Annotation, Dashboard, DashboardShare, Subscription
from stacklens.control.models.explore import SavedQuery
from stacklens.control.models.feedback import EventAttachment, UserFeedback
from stacklens.control.models.integrations import ExternalLink, TrackerConnection
from stacklens.control.models.issue_merges import IssueMerge
from stacklens.control.models.maintenance import MaintenanceRun
from stacklens.control.models.monitors import Monitor, MonitorCheckIn, MonitorIncident
from stacklens.control.models.service import ServiceEpisode
from stacklens.control.models.share_links import ShareLink
from stacklens.control.models.sso import BreakGlassAccount, SsoConfig, SsoIdentity, SsoLogin, SsoSession
from stacklens.control.models.teams import (
    DigestItem,
    IssueAction,
    IssueAssignee,
    IssueComment,
    IssueNewsMark,
    IssueWatcher,
    NotificationSetting,
    OwnershipRules,
    Team,
    TeamMember,
)

__all__ = [
    "ActivityEntry",
    "AgentToken",
    "AlertChannel",
    "AlertDelivery",
    "AlertEvaluation",
    "AlertNotification",
    "AlertRule",
    "AlertRuleState",
    "Annotation",
    "ApiKey",
    "AppKey",
    "Base",
    "BreakGlassAccount",
    "Budget",
    "Dashboard",
    "DashboardShare",
    "DigestItem",
    "EventAttachment",
    "ExternalLink",
    "Invitation",
    "IssueAction",
    "IssueAssignee",
    "IssueComment",
    "IssueMerge",
    "IssueNewsMark",
    "IssueWatcher",
    "KeyUsage",
    "MaintenanceRun",
    "Membership",
    "Monitor",
    "MonitorCheckIn",
    "MonitorIncident",
    "NotificationSetting",
    "OAuthClient",
    "OAuthCode",
    "Organization",
    "OwnershipRules",
    "Project",
    "SavedQuery",
    "ServiceEpisode",
    "ShareLink",
    "SsoConfig",
    "SsoIdentity",
    "SsoLogin",
    "SsoSession",
    "Subscription",
    "Team",
    "TeamMember",
    "TrackerConnection",
    "User",
    "UserFeedback",
    "UserSession",
    "UtcDateTime",
    "iso_utc",
    "utcnow",
]
