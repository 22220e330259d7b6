"""A tool context over the test's own stores (control store and warehouse database) for one member."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import select

from stacklens.agents.calls import Usage, counting
from stacklens.agents.context import ToolContext
from stacklens.agents.tokens import AgentIdentity
from stacklens.control.db import session_scope
from stacklens.control.models import User
from stacklens.settings import Settings
from stacklens.warehouse.client import get_warehouse
from stacklens.warehouse.migrations import apply_migrations


@contextmanager
def tool_context(
    settings: Settings, org: dict[str, Any], scopes: frozenset[str], role: str = "owner"
) -> Iterator[ToolContext]:
    apply_migrations(settings)
    usage = Usage()
    with session_scope(settings) as session:
        user_id = session.scalars(select(User.id).where(User.email == org["email"])).one()
        who = AgentIdentity(org["org_id"], user_id, str(org["email"]), role, scopes, "personal", 1, "test")
        yield ToolContext(who, settings, session, counting(get_warehouse(settings), usage), usage)
