"""Retry-After is honoured: the real shipper against a real local server that answers 429 or 503 with
``Retry-After: 2`` and then 200. The wait between the refused request and the resend is measured."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest

from shipper.backoff import backoff_delay
from shipper.config import load_config
from tests.shipper.harness import Workspace, append_lines, assert_exactly_once, new_ids, wait_until
from tests.shipper.ingest_server import IngestServer

JITTER_CAP = 0.05  # the workspace's retryBackoff: the most the first retry adds on top of Retry-After


@pytest.fixture(autouse=True)
def patient_stop(ws: Workspace) -> None:
    """A long shutdown grace: a tracker fsync on a busy disk can outlast the workspace's 3 s, and how a stop
    ends in time is not what these tests are about (a clean stop takes milliseconds either way)."""
    ws.settings["shutdownGrace"] = "20s"
    ws.write_config()


def gap_after_first_refusal(server: IngestServer) -> float:
    with server.lock:
        (refused_at, _), (resent_at, status) = server.landed.posts[:2]
    assert status == 200
    return resent_at - refused_at


@pytest.mark.parametrize("status", [429, 503])
def test_the_resend_waits_for_retry_after_even_through_a_reload(
    ws: Workspace, server: IngestServer, status: int
) -> None:
    server.behaviour.script = [(status, "2")]
    ids = new_ids(30)
    append_lines(ws.day(), ids)
    proc = ws.start()
    wait_until(lambda: server.landed.statuses[status] == 1, 10, f"the {status}")
    time.sleep(0.5)
    proc.signal(signal.SIGHUP)  # a reload wakes the loop; it must not cut the service's wait short
    wait_until(lambda: set(ids) <= server.ids(), 10, "delivery after the wait")
    gap = gap_after_first_refusal(server)
    assert 2.0 <= gap <= 2.0 + JITTER_CAP + 0.5, gap
    reason = "429 Rate Limited" if status == 429 else "503 Service Unavailable"
    assert f"Retry attempt 1/3 ({reason}, Retry-After 2s; waiting 2.0s)" in proc.output()
    proc.signal(signal.SIGTERM)
    assert proc.wait(30) == 0, proc.output()[-3000:]
    assert_exactly_once(server, set(ids))


def test_a_stop_within_retry_after_sends_nothing_early_and_loses_nothing(
    ws: Workspace, server: IngestServer
) -> None:
    server.behaviour.script = [(429, "30")]
    ids = new_ids(30)
    append_lines(ws.day(), ids)
    proc = ws.start()
    wait_until(lambda: server.landed.statuses[429] == 1, 10, "the 429")
    proc.signal(signal.SIGTERM)
    started = time.monotonic()
    assert proc.wait(15) == 0, proc.output()[-2000:]
    assert time.monotonic() - started < 2
    assert "kept for the next start: the service asked for 30s (Retry-After)" in proc.output()
    assert server.landed.requests == 1 and not server.ids()  # nothing went before the 30 s
    again = ws.start()
    wait_until(lambda: set(ids) <= server.ids(), 10, "delivery on the next start")
    again.signal(signal.SIGTERM)
    assert again.wait(15) == 0
    assert_exactly_once(server, set(ids))


def test_retry_after_is_a_floor_with_jitter_above_it(ws: Workspace) -> None:
    config = load_config(Path(ws.config))
    for attempt in (1, 2, 3):
        cap = min(config.retry_backoff_max, config.retry_backoff * 2 ** (attempt - 1))
        waits = [backoff_delay(config, attempt, 2.0) for _ in range(500)]
        assert all(2.0 <= w <= 2.0 + cap for w in waits)
        # Spread over the jitter window, so shippers told the same Retry-After come back apart.
        assert max(waits) - min(waits) > cap * 0.8 and len(set(waits)) > 450
    plain = [backoff_delay(config, 1, None) for _ in range(500)]
    assert all(0 <= w <= config.retry_backoff for w in plain)
