"""An answer is remembered for its moment, never past a write of this process to the control store, and the
remembered answers stay bounded."""

from __future__ import annotations

from sqlalchemy import update

from stacklens.control import remembered
from stacklens.control.db import session_scope
from stacklens.control.models import Organization
from stacklens.control.remembered import Remembered
from stacklens.settings import Settings


def test_an_answer_is_reused_until_a_write_or_its_moment_passes(settings: Settings, make_org) -> None:
    org = make_org("Remembered")
    reads: list[str] = []

    def read(value: str) -> str:
        reads.append(value)
        return value

    answers: Remembered[str, str] = Remembered(seconds=60.0)
    assert answers.answer("a", lambda: read("first")) == "first"
    assert answers.answer("a", lambda: read("second")) == "first"  # no read: nothing changed
    assert answers.answer("b", lambda: read("other")) == "other"  # each key its own answer
    with session_scope(settings) as session:
        session.execute(
            update(Organization).where(Organization.id == org["org_id"]).values(events_per_minute=9)
        )
    assert answers.answer("a", lambda: read("after the write")) == "after the write"
    assert reads == ["first", "other", "after the write"]

    expired: Remembered[str, str] = Remembered(seconds=0.0)  # a write of another process: the moment passes
    assert expired.answer("a", lambda: read("one")) == "one"
    assert expired.answer("a", lambda: read("two")) == "two"


def test_the_answers_kept_are_bounded(monkeypatch) -> None:
    monkeypatch.setattr(remembered, "MAX_REMEMBERED", 3)
    answers: Remembered[int, int] = Remembered(seconds=60.0)
    for key in range(10):
        answers.answer(key, lambda key=key: key * 2)
    assert len(answers._answers) <= 3
    assert answers.answer(9, lambda: -1) == 18  # the newest is kept
