"""The operators' log of maintenance (backup, restore, migrate, retention run): one row per action,
instance-wide.

The activity log (``activity_entries``) belongs to one organization; a backup or a migration belongs to the
installation, so its record has a table of its own, shown on the operators' page (``/admin/operations``).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, BigInteger, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from stacklens.control.models.base import Base, UtcDateTime, utcnow


class MaintenanceRun(Base):
    __tablename__ = "maintenance_runs"

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True)
    kind: Mapped[str] = mapped_column(String(16), index=True)  # backup | restore | migrate | retention
    started_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    outcome: Mapped[str] = mapped_column(String(16), default="running")  # running | succeeded | failed
    duration_ms: Mapped[int | None] = mapped_column(Integer, nullable=True)
    summary: Mapped[str] = mapped_column(String(500), default="")  # one line for people
    detail: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)  # figures for the page and the API
