"""The last owner stays even when two owners act on each other at the same moment (SQLite and PostgreSQL):
every demotion and removal of an owner is decided under the organization's lock, so exactly one of two
crossing changes happens and the other is refused with the "only owner" / "last owner" message."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest

from stacklens.control import accounts
from stacklens.control.db import session_scope
from stacklens.control.errors import AccountError
from stacklens.settings import Settings

TRIALS = 10

Change = Callable[[Settings, int, int, int], None]


def _demote(settings: Settings, org_id: int, actor_id: int, target_id: int) -> None:
    with session_scope(settings) as session:
        accounts.change_role(session, org_id, target_id, "member", actor_user_id=actor_id)


def _remove(settings: Settings, org_id: int, actor_id: int, target_id: int) -> None:
    with session_scope(settings) as session:
        accounts.remove_member(session, org_id, target_id, actor_user_id=actor_id)


def _two_owners(settings: Settings, name: str) -> tuple[int, int, int]:
    with session_scope(settings) as session:
        org, _ = accounts.create_organization(session, name, f"a-{name}@b.co", "password-1")
        first = accounts.list_members(session, org.id)[0][0]
        second = accounts.add_member(session, org.id, f"b-{name}@b.co", "password-2", role="owner")
        return org.id, first.id, second.id


def _at_once(settings: Settings, changes: list[tuple[Change, int, int, int]]) -> list[Exception | None]:
    """Run each change in its own thread and session, released together by a barrier."""
    barrier = threading.Barrier(len(changes))
    outcomes: list[Exception | None] = [None] * len(changes)

    def run(index: int) -> None:
        change, org_id, actor_id, target_id = changes[index]
        barrier.wait()
        try:
            change(settings, org_id, actor_id, target_id)
        except AccountError as exc:
            outcomes[index] = exc

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(changes))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return outcomes


@pytest.mark.parametrize(
    ("first", "second"),
    [(_demote, _demote), (_remove, _remove), (_demote, _remove)],
    ids=["demote-demote", "remove-remove", "demote-remove"],
)
def test_two_owners_acting_on_each_other_leave_one_owner(
    control_settings: Settings, first: Change, second: Change
) -> None:
    for trial in range(TRIALS):
        org_id, a, b = _two_owners(control_settings, f"org{trial}")
        outcomes = _at_once(control_settings, [(first, org_id, a, b), (second, org_id, b, a)])
        refused = [str(exc) for exc in outcomes if exc is not None]
        assert len(refused) == 1, f"trial {trial}: {outcomes}"
        assert "only owner" in refused[0] or "last owner" in refused[0]
        with session_scope(control_settings) as session:
            owners = [u.id for u, role in accounts.list_members(session, org_id) if role == "owner"]
        assert len(owners) == 1, f"trial {trial}: owners {owners}"
