"""The warehouse's liveness probe (stacklens/warehouse/probe.py): a ping that ran alone on the embedded engine
gives back the library pages its statement mapped; one beside other calls leaves them; neither counts as a
call for the purge or the pipelines' idle check."""

from __future__ import annotations

import threading
import time

import pytest
from fastapi.testclient import TestClient

from stacklens.settings import Settings
from stacklens.warehouse import engine, probe
from stacklens.warehouse.calls import warehouse_calls
from stacklens.warehouse.client import WarehouseUnavailable, ensure_database, get_warehouse

QUIET = 0.3


@pytest.fixture
def released(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    calls: list[bool] = []
    monkeypatch.setattr(engine, "release_library_pages", lambda: calls.append(True) or True)
    monkeypatch.setattr(probe, "QUIET_SECONDS", QUIET)
    return calls


def test_a_ping_alone_releases_the_pages_and_is_not_counted(settings: Settings, released: list[bool]) -> None:
    ensure_database(settings)
    get_warehouse(settings).query("SELECT 1")
    # Up to five quiet windows: a thread an earlier test of this worker left may still make a call (a full
    # run once saw one within the window); a ping that never releases fails all five.
    for _ in range(5):
        time.sleep(QUIET + 0.05)
        before = warehouse_calls()
        probe.ping(settings)
        if released:
            break
    assert released == [True]
    assert warehouse_calls() == before, "a probe lands nothing: the idle check need not look again"


def test_a_ping_right_after_another_call_keeps_the_pages(settings: Settings, released: list[bool]) -> None:
    ensure_database(settings)
    client = get_warehouse(settings)
    client.query("SELECT 1")
    probe.ping(settings)
    assert released == [], "a call ended within the quiet seconds: the engine is in use"
    time.sleep(QUIET + 0.05)
    probe.ping(settings)
    assert released == [True]


def test_a_ping_beside_a_running_call_keeps_the_pages(settings: Settings, released: list[bool]) -> None:
    ensure_database(settings)
    time.sleep(QUIET + 0.05)
    running = threading.Event()

    def slow_read() -> None:
        running.set()
        get_warehouse(settings).query("SELECT sleep(1)")

    reader = threading.Thread(target=slow_read)
    reader.start()
    running.wait(5)
    time.sleep(0.2)
    probe.ping(settings)
    reader.join(10)
    assert released == []


def test_a_failing_ping_raises_and_releases_nothing(settings: Settings, released: list[bool]) -> None:
    down = settings.model_copy(update={"warehouse_url": "http://127.0.0.1:9/"})
    with pytest.raises(WarehouseUnavailable, match="cannot reach the warehouse"):
        probe.ping(down)
    assert released == []


def test_the_health_answer_probes_through_it(stores: Settings, released: list[bool]) -> None:
    from stacklens.cli.app import build_app

    with TestClient(build_app(stores)) as client:
        time.sleep(QUIET + 0.05)
        answer = client.get("/api/health")
        assert answer.status_code == 200 and answer.json() == {"status": "ok"}
    assert released, "the health answer's ping, alone on an idle server, gave the pages back"
