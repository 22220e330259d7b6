"""Refusals are kept per data directory: one server's full queue says nothing about another's."""

from __future__ import annotations

from pathlib import Path

from stacklens.ingest.refusals import note_refusal, seconds_since_refusal


def test_a_refusal_is_the_servers_own(tmp_path: Path) -> None:
    one, other = tmp_path / "one", tmp_path / "other"
    assert seconds_since_refusal(one, "queue") is None
    note_refusal(one, "queue")
    since = seconds_since_refusal(one, "queue")
    assert since is not None and 0 <= since < 1
    assert seconds_since_refusal(one, "disk") is None
    assert seconds_since_refusal(other, "queue") is None
