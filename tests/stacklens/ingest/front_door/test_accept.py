"""The front door's acceptor (stacklens/ingest/front_door/accept.py): duplicates across concurrent requests
dropped by one look-up, a replay answered with its first figures, and the requests of one event-loop turn
accepted on the loop as one group unless something of it would block."""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import Callable

import pytest
from clickhouse_connect.driver.client import Client

from api.landing import landed
from stacklens.blocking import may_block
from stacklens.ingest.front_door import FrontDoor, accept, front_door, recover_and_index, settle_front_doors
from stacklens.ingest.front_door.accept import LOOP_GROUP_ROWS
from stacklens.ingest.service import Attribution, BatchResult, admit_batch
from stacklens.ingest.stored_key_index import own_warehouse
from stacklens.settings import Settings
from tests.stacklens.ingest.front_door_seed import (
    APP_KEY,
    ORG,
    PROJECT,
    admit,
    count,
    error_line,
    land,
)


def test_the_same_event_in_concurrent_requests_lands_once(settings: Settings, warehouse: Client) -> None:
    event_id = uuid.uuid4().hex
    results: list[BatchResult] = []
    barrier = threading.Barrier(12)

    def send() -> None:
        barrier.wait()
        results.append(land(settings, error_line(event_id)))

    threads = [threading.Thread(target=send) for _ in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted((r.accepted, r.duplicates) for r in results) == [(0, 1)] * 11 + [(1, 0)]
    assert settle_front_doors()
    assert count(warehouse, "events") == 1


def test_an_idempotency_key_answers_the_first_figures(settings: Settings, warehouse: Client) -> None:
    body = error_line() + b"\n" + error_line()
    first = land(settings, body, "batch-one")
    replay = land(settings, body, "batch-one")
    assert (first.accepted, first.replayed) == (2, False)
    assert (replay.accepted, replay.replayed) == (2, True)
    assert settle_front_doors()
    assert land(settings, body, "batch-one").replayed
    assert count(warehouse, "events") == 2


async def _on_the_loop(
    settings: Settings, bodies: list[bytes], *, key: str | None = None, figures: bool = False
) -> list[tuple[BatchResult, str]]:
    """Each body admitted and landed as an entrance does (api/landing.py), concurrently on this loop; with
    the thread each answer was told in."""
    told: list[str] = []

    async def one(body: bytes) -> tuple[BatchResult, str]:
        admitted = admit(settings, body, key, figures=figures)
        if not isinstance(admitted, BatchResult):
            original = admitted.submit

            def submit(on_done: Callable[[], None] | None = None, *, wake: bool = True) -> FrontDoor:
                def noted() -> None:
                    told.append(threading.current_thread().name)
                    if on_done is not None:
                        on_done()

                return original(noted, wake=wake)

            admitted.submit = submit
        result = await landed(admitted)
        return result, told[-1] if told else ""

    return list(await asyncio.gather(*(one(body) for body in bodies)))


def test_the_requests_of_one_loop_turn_are_one_group_accepted_on_the_loop(
    settings: Settings, warehouse: Client
) -> None:
    settings = settings.model_copy(update={"spool_sync": False})  # a synced spool: the next test
    answers = asyncio.run(_on_the_loop(settings, [error_line() for _ in range(20)]))
    assert [result.accepted for result, _ in answers] == [1] * 20
    assert {thread for _, thread in answers} == {"MainThread"}, "answered on the loop, no thread woken"
    assert front_door(settings).acceptor.thread is None, "the door's thread was never started"
    status = front_door(settings).status()
    assert status["requests_per_accept"] == 20.0, "one turn's requests, one group"
    assert settle_front_doors()
    assert count(warehouse, "events") == 20


def test_a_synced_spool_is_written_on_the_acceptors_thread_never_on_the_loop(
    settings: Settings, warehouse: Client
) -> None:
    """An fsync waits milliseconds for the disk, after the group's quotas are spent: the loop hands every
    group to the thread, which syncs while the loop takes more requests (issue #62)."""
    assert settings.spool_sync
    answers = asyncio.run(_on_the_loop(settings, [error_line() for _ in range(20)]))
    assert [result.accepted for result, _ in answers] == [1] * 20
    assert {thread for _, thread in answers} == {"front-door-accept"}
    assert settle_front_doors()
    assert count(warehouse, "events") == 20


def test_the_loop_takes_small_groups_only_a_thousand_line_batch_goes_to_the_thread(
    settings: Settings, warehouse: Client
) -> None:
    # One turn: ten one-line requests, then a 1,000-line batch (milliseconds of digests and journal), then
    # one more line. The loop accepts the first ten; the batch (more than LOOP_GROUP_ROWS rows) and the one
    # after it are the thread's, in order. (A synced spool is never written on the loop: unsynced here.)
    settings = settings.model_copy(update={"spool_sync": False})
    big = b"\n".join(error_line() for _ in range(1_000))
    assert LOOP_GROUP_ROWS < 1_000
    bodies = [error_line() for _ in range(10)] + [big, error_line()]
    answers = asyncio.run(_on_the_loop(settings, bodies))
    assert [result.accepted for result, _ in answers] == [1] * 10 + [1_000, 1]
    assert [thread for _, thread in answers] == ["MainThread"] * 10 + ["front-door-accept"] * 2
    assert settle_front_doors()
    assert count(warehouse, "events") == 1_011


def test_a_group_that_would_look_keys_up_goes_to_the_acceptor_thread(
    settings: Settings, warehouse: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The requests below follow the first one: the door is not quiet, so the acceptor answers them (a quiet
    # door's lone request is answered by the drain that lands it, test_door.py). Not "quiet" for the test's
    # whole length, whatever a busy machine takes between them.
    monkeypatch.setattr(accept, "QUIET_SECONDS", 600.0)
    event_id = uuid.uuid4().hex
    assert land(settings, error_line(event_id)).accepted == 1
    assert settle_front_doors()
    # Figures answered: its keys are looked up in the warehouse before the answer, which the loop does not
    # wait for. The group stepped aside whole, and the duplicate is found by the thread.
    [(again, thread)] = asyncio.run(_on_the_loop(settings, [error_line(event_id)], figures=True))
    assert (again.accepted, again.duplicates) == (0, 1)
    assert thread == "front-door-accept"
    # A keyed batch and its resend: answered with its first figures, wherever its look-up ran.
    body = error_line()
    [(first, _)] = asyncio.run(_on_the_loop(settings, [body], key="loop-batch", figures=True))
    [(replay, _)] = asyncio.run(_on_the_loop(settings, [body], key="loop-batch", figures=True))
    assert (first.accepted, first.replayed) == (1, False)
    assert replay.replayed
    assert settle_front_doors()
    assert count(warehouse, "events") == 2


def test_keyed_batches_whose_quotas_would_block_are_set_aside_with_the_rest_of_their_group(
    settings: Settings, warehouse: Client
) -> None:
    """A keyed batch spends its quotas in its accept group; one whose quota must be read (may_block) sets
    itself and the requests after it aside for the thread, before any of their effects: every quota is
    spent once, every batch lands once."""
    settings = settings.model_copy(update={"spool_sync": False})  # accepted on the loop
    assert own_warehouse(settings)  # as `stacklens serve` starts: new batch ids are known new, no look-up
    recover_and_index(settings)
    assert front_door(settings).state.index.trusted
    spent: list[str] = []

    def quota_of(name: str, *, read: bool) -> Callable[[object], None]:
        def take(_counts: object) -> None:
            if read:
                may_block("a control-store read")
            spent.append(name)

        return take

    async def send() -> list[tuple[str, BatchResult]]:
        async def one(name: str, read: bool) -> tuple[str, BatchResult]:
            admitted = admit_batch(
                settings,
                ORG,
                error_line(),
                header_app_key=APP_KEY,
                idempotency_key=f"batch-{name}-{uuid.uuid4().hex[:8]}",
                resolve=lambda raw: Attribution(PROJECT, None, 1) if raw == APP_KEY else None,
                take_events=quota_of(name, read=read),
            )
            return name, await landed(admitted)

        reads = {"a": False, "b": False, "c": True, "d": False}
        return list(await asyncio.gather(*(one(name, read) for name, read in reads.items())))

    answers = asyncio.run(send())
    assert [(name, result.accepted) for name, result in answers] == [("a", 1), ("b", 1), ("c", 1), ("d", 1)]
    assert sorted(spent) == ["a", "b", "c", "d"], "each quota spent once, none twice"
    assert spent[:2] == ["a", "b"], "the two before the blocking one were spent on the loop, first"
    status = front_door(settings).status()
    assert status["requests_per_accept"] < 4.0, "the group was cut where its quota would block"
    assert settle_front_doors()
    assert count(warehouse, "events") == 4
