"""The service's own episodes (stacklens/self_watch): one row per condition, whether it is firing now.

A row is the one truth every process of an installation shares: the process whose conditional UPDATE flips
``firing`` sends the episode's alert (or its recovery), so several API workers seeing the same full disk send
one alert, not one each.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Boolean, String
from sqlalchemy.orm import Mapped, mapped_column

from stacklens.control.models.base import Base, UtcDateTime, utcnow


class ServiceEpisode(Base):
    __tablename__ = "service_episodes"

    condition: Mapped[str] = mapped_column(String(40), primary_key=True)  # stacklens.self_watch.episodes
    firing: Mapped[bool] = mapped_column(Boolean, default=False)
    since: Mapped[datetime] = mapped_column(UtcDateTime(), default=utcnow)  # when it last fired or recovered
    detail: Mapped[str] = mapped_column(String(500), default="")  # what was seen when it fired
