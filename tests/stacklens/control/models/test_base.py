"""The base of the control store's tables: timestamps are aware UTC in Python, stored as naive UTC on
SQLite."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from sqlalchemy import Integer, create_engine, text
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

from stacklens.control.models.base import UtcDateTime, iso_utc, utcnow

PARIS_WINTER = timezone(timedelta(hours=1))


class _Scratch(DeclarativeBase):
    """A metadata of its own: the table below is not one of the control store's."""


class _Stamped(_Scratch):
    __tablename__ = "stamped"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    at: Mapped[datetime | None] = mapped_column(UtcDateTime(), nullable=True)


def test_iso_utc_writes_milliseconds_and_a_z() -> None:
    assert iso_utc(datetime(2026, 11, 21, 19, 22, 3, 123456, tzinfo=UTC)) == "2026-11-21T19:22:03.123Z"
    assert iso_utc(datetime(2026, 11, 21, 20, 22, 3, tzinfo=PARIS_WINTER)) == "2026-11-21T19:22:03.000Z"
    assert iso_utc(datetime(2026, 11, 21, 19, 22, 3)) == "2026-11-21T19:22:03.000Z"  # naive is UTC


def test_utcnow_is_aware_utc() -> None:
    assert utcnow().tzinfo is UTC


def test_sqlite_stores_naive_utc_and_returns_aware_utc() -> None:
    engine = create_engine("sqlite://")
    try:
        _Scratch.metadata.create_all(engine)
        with Session(engine) as session:
            session.add_all(
                [_Stamped(id=1, at=datetime(2026, 1, 1, 13, 0, tzinfo=PARIS_WINTER)), _Stamped(id=2, at=None)]
            )
            session.commit()
            stored = session.execute(text("SELECT at FROM stamped WHERE id = 1")).scalar_one()
            assert stored.startswith("2026-01-01 12:00:00")  # UTC, no offset
            session.expire_all()
            read = session.get(_Stamped, 1)
            assert read is not None and read.at == datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
            assert read.at.tzinfo is UTC
            assert session.get(_Stamped, 2).at is None
    finally:
        engine.dispose()
