"""DSN callers remembered for a moment (:mod:`stacklens.control.remembered`): the one-event-per-request road
(every Sentry SDK sends one event per envelope) looks a key up about once a second instead of once per event.

An answer of :func:`~stacklens.control.auth.find_dsn_caller` (the key, its organization's quota, its project's
settings) is reused for a second at most, and never past a write of this process to the control store."""

from __future__ import annotations

from stacklens.control.auth import DsnCaller, find_dsn_caller
from stacklens.control.db import session_scope
from stacklens.control.remembered import Remembered
from stacklens.settings import Settings

_callers: Remembered[tuple[str, str], DsnCaller | None] = Remembered()


def dsn_caller(settings: Settings, raw: str) -> DsnCaller | None:
    """The caller of the DSN key ``raw`` (None: no current app key), remembered as the module says."""

    def read() -> DsnCaller | None:
        with session_scope(settings) as session:
            return find_dsn_caller(session, raw)

    return _callers.answer((settings.resolved_database_url, raw), read)
