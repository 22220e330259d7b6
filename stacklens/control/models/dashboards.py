"""Control-store tables of the analyst's workspace: dashboards (a grid of widgets, each an Explore question),
annotations (deploys and events that CI or a person marks on every time chart) and report subscriptions.

Imported by :mod:`stacklens.control.models` so they share its metadata (one Alembic history).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Boolean, ForeignKey, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from stacklens.control.models.base import Base, UtcDateTime, utcnow


class Dashboard(Base):
    __tablename__ = "dashboards"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    org_id: Mapped[int] = mapped_column(ForeignKey("organizations.id", ondelete="CASCADE"), index=True)
    # Who made it: a member on the page; NULL when made with the organization's API key.
    owner_user_id: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), nullable=True, default=None
    )
    name: Mapped[str] = mapped_column(String(200))
    description: Mapped[str] = mapped_column(Text, default="")
    # The normalised body (stacklens.explore.dashboards): {"range", "environment", "release", "project"}.
    filters: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    # The widgets in reading order, each {"title", "kind", "query" | "saved_query_id" | "view", "layout"}.
    widgets: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)
    # Its variables, each {"name", "column" | "values", "default"} (stacklens.explore.dashboard_variables).
    variables: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list, server_default="[]")
    # How often the page asks again: None, "30s", "1m", "5m" or "15m".
    refresh: Mapped[str | None] = mapped_column(String(8), nullable=True, default=None)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)


class Annotation(Base):
    __tablename__ = "annotations"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    org_id: Mapped[int] = mapped_column(ForeignKey("organizations.id", ondelete="CASCADE"), index=True)
    # NULL: the whole organization (a deploy of a shared backend shows on every project's charts).
    project_id: Mapped[int | None] = mapped_column(
        ForeignKey("projects.id", ondelete="CASCADE"), nullable=True, default=None, index=True
    )
    time: Mapped[datetime] = mapped_column(UtcDateTime(), index=True)
    text: Mapped[str] = mapped_column(String(500))
    tags: Mapped[list[str]] = mapped_column(JSON, default=list)
    release: Mapped[str] = mapped_column(String(200), default="")
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)


class Subscription(Base):
    """A scheduled report: a dashboard or saved query sent daily or weekly at a local time, through a
    channel's outbox (stacklens.explore.subscriptions)."""

    __tablename__ = "report_subscriptions"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    org_id: Mapped[int] = mapped_column(ForeignKey("organizations.id", ondelete="CASCADE"), index=True)
    owner_user_id: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), nullable=True, default=None
    )
    dashboard_id: Mapped[int | None] = mapped_column(
        ForeignKey("dashboards.id", ondelete="CASCADE"), nullable=True, default=None
    )
    saved_query_id: Mapped[int | None] = mapped_column(
        ForeignKey("saved_queries.id", ondelete="CASCADE"), nullable=True, default=None
    )
    every: Mapped[str] = mapped_column(String(8))  # "day" | "week"
    at: Mapped[str] = mapped_column(String(5))  # "HH:MM", local to timezone
    weekday: Mapped[int | None] = mapped_column(Integer, nullable=True, default=None)  # 0 = Monday (weekly)
    timezone: Mapped[str] = mapped_column(String(64), default="UTC")
    format: Mapped[str] = mapped_column(String(8))  # "summary" | "csv"
    channel_id: Mapped[int] = mapped_column(ForeignKey("alert_channels.id", ondelete="CASCADE"))
    paused: Mapped[bool] = mapped_column(Boolean, default=False)
    next_run_at: Mapped[datetime] = mapped_column(UtcDateTime(), index=True)
    last_run_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True, default=None)
    last_error: Mapped[str] = mapped_column(String(500), default="")
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)


class DashboardShare(Base):
    """A read-only link to a dashboard (``/share/dashboards/{token}``): only the token's SHA-256 is kept;
    served from its snapshot, refreshed at most every few minutes (stacklens.explore.dashboard_shares)."""

    __tablename__ = "dashboard_shares"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    org_id: Mapped[int] = mapped_column(ForeignKey("organizations.id", ondelete="CASCADE"), index=True)
    dashboard_id: Mapped[int] = mapped_column(ForeignKey("dashboards.id", ondelete="CASCADE"), index=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_by_user_id: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), nullable=True, default=None
    )
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(UtcDateTime())
    revoked_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True, default=None)
    # The page's content as plain JSON (texts and figures, no query objects) and when it was taken.
    snapshot: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True, default=None)
    snapshot_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True, default=None)
