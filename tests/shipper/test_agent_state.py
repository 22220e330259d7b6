"""The delivery loop's state writes the tracker at most once per ``commitInterval`` (unless forced) and keeps
``status.json`` at least as new as the tracker; real files in a real log directory."""

from __future__ import annotations

import os
from pathlib import Path

from shipper.agent_state import AgentState
from shipper.config import load_config
from shipper.tracker import decode
from tests.shipper.harness import Workspace, append_lines, new_ids


def _state(ws: Workspace) -> AgentState:
    ws.settings["commitInterval"] = "1h"  # only a forced save writes during the test
    ws.write_config()
    return AgentState(load_config(Path(ws.config)))


def test_a_change_is_written_once_then_throttled_until_forced(ws: Workspace) -> None:
    append_lines(ws.day(), new_ids(3))
    state = _state(ws)
    assert not state.queue and state.open is None and not state.scanner.dirty
    tracker = state.config.tracker_path
    state.scanner.load()  # reads the directory: a file to track, so the tracker changed
    assert state.scanner.dirty
    state._save(force=True)
    assert not state.scanner.dirty and tracker.is_file()
    first = decode(tracker.read_bytes())
    assert [entry["path"] for entry in first["files"].values()] == [ws.day().name]
    # status.json is written with the tracker and says the same files.
    status = decode(state.status_path.read_bytes())
    assert status["files"] == first["files"]

    written = tracker.stat().st_mtime_ns
    state.scanner.dirty = True
    state._save()  # within commitInterval: not written, still to write
    assert tracker.stat().st_mtime_ns == written and state.scanner.dirty
    state._save(force=True)
    assert not state.scanner.dirty and decode(tracker.read_bytes())["written_at"] >= first["written_at"]


def test_an_unwritable_tracker_is_an_access_problem_not_a_crash(ws: Workspace) -> None:
    state = _state(ws)
    state.scanner.load()
    os.replace(ws.logs, ws.root / "moved")  # the log directory is gone: nothing can be written there
    try:
        state._save(force=True)
    finally:
        os.replace(ws.root / "moved", ws.logs)
    assert state.scanner.dirty  # still to write once the directory is back
    assert str(state.config.tracker_path) in state.scanner.stats["access"]
