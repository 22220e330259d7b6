"""The resend's journal (shipper/resend_journal.py): the lock of one resend at a time, entries read back whole
(one torn by a crash is skipped), and fates that give the same dead letters however often they are applied."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from shipper.deadletters import DeadLetter
from shipper.resend_journal import Busy, Fates, Journal


def _letter(ident: str, reason: str = "bad app key", resends: int = 0) -> DeadLetter:
    return DeadLetter(ident, "2026-11-02T10:00:00Z", reason, "app.log", 1, 2, 0, 4, b"line", resends=resends)


def test_the_journal_is_the_lock_and_keeps_whole_entries(tmp_path: Path) -> None:
    path = tmp_path / "deadletter.journal"
    first, second = Journal(path), Journal(path)
    first.lock()
    with pytest.raises(Busy):
        second.lock()
    first.append({"send": "k1", "ids": ["a"]})
    os.write(first.fd, b'{"done": "k1", "lan')  # a crash in the middle of an entry
    assert first.entries() == [{"send": "k1", "ids": ["a"]}]
    first.clear()
    assert first.entries() == []
    first.close()
    second.lock()
    second.close()


def test_fates_applied_twice_give_the_same_letters() -> None:
    fates = Fates()
    fates.record({"done": "k1", "landed": ["a"], "refused": {"b": ["still refused", 1]}})
    assert fates and fates.apply(_letter("a")) is None
    refused = fates.apply(_letter("b"))
    assert refused is not None and (refused.reason, refused.resends) == ("still refused", 1)
    assert fates.apply(refused) is refused  # already what the answer says: unchanged
    assert fates.apply(_letter("c")) == _letter("c") and not Fates()
