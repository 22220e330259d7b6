"""Control-store table of performance budgets: a metric's limit over a project or a page route."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Float, ForeignKey, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from stacklens.control.models.base import Base, UtcDateTime, utcnow


class Budget(Base):
    """A performance budget: metric (``load_time_ms``, ``js_bytes``, ``lcp_ms``, ``api_p95_ms`` …) over a
    scope."""

    __tablename__ = "budgets"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    org_id: Mapped[int] = mapped_column(ForeignKey("organizations.id", ondelete="CASCADE"), index=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"), index=True)
    metric: Mapped[str] = mapped_column(String(32))
    scope: Mapped[str] = mapped_column(String(300), default="*")  # a page route, or "*" for the project
    value: Mapped[float] = mapped_column(Float)
    # How the current value is taken: the statistic over the last ``window_days`` days, judged only from
    # ``min_samples`` samples on (fewer is "insufficient data", never a pass).
    statistic: Mapped[str] = mapped_column(String(8), default="p75", server_default="p75")
    window_days: Mapped[int] = mapped_column(Integer, default=7, server_default="7")
    min_samples: Mapped[int] = mapped_column(Integer, default=20, server_default="20")
    created_at: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)
    # The `budget_status` run's evaluation of this budget raised: why (shown on the budgets page), how many
    # times in a row, and when it is evaluated again (the outbox's backoff); other budgets go on meanwhile.
    last_error: Mapped[str] = mapped_column(String(500), default="", server_default="")
    failures: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    retry_at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)
