"""The claim on a project's grouping across processes, on SQLite and PostgreSQL: another process holding it
refuses this one (409, saying why), another project is free meanwhile, and a process killed while holding it
gives it up (its connection or its file goes with it)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from sqlalchemy.orm import Session

from stacklens.control.db import session_scope
from stacklens.control.grouping_claims import GroupingBusy, grouping_claimed
from stacklens.errors import Conflict
from stacklens.settings import Settings

# A process that claims project 7 of the control store at argv[1], says so, and waits to be killed.
_HOLDER = textwrap.dedent(
    """
    import sys
    from sqlalchemy import create_engine
    from sqlalchemy.orm import Session
    from stacklens.control.grouping_claims import grouping_claimed

    with Session(create_engine(sys.argv[1])) as session, grouping_claimed(session, 7):
        print("held", flush=True)
        sys.stdin.read()
    """
)


def _claim(session: Session, project_id: int) -> bool:
    try:
        with grouping_claimed(session, project_id):
            return True
    except GroupingBusy:
        return False


def test_a_claim_holds_across_processes_and_ends_with_its_process(control_settings: Settings) -> None:
    with subprocess.Popen(
        [sys.executable, "-c", _HOLDER, control_settings.resolved_database_url],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as holder:
        try:
            assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
            with session_scope(control_settings) as session:
                with (
                    pytest.raises(GroupingBusy, match="in progress") as refused,
                    grouping_claimed(session, 7),
                ):
                    pass
                assert isinstance(refused.value, Conflict)  # answered 409
                assert _claim(session, 8)  # another project is free
        finally:
            holder.kill()  # no unlock: the claim must end with the process
            holder.wait(30)
    with session_scope(control_settings) as session:
        assert _claim(session, 7)
        # Two claims in one process (two requests' threads) exclude each other too, and end with the block.
        with grouping_claimed(session, 7), session_scope(control_settings) as other:
            assert not _claim(other, 7)
        assert _claim(session, 7)
