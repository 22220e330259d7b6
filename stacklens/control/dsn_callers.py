"""DSN callers remembered for a moment: the one-event-per-request road (every Sentry SDK sends one event per
envelope) looks a key up about once a second instead of once per event.

An answer of :func:`~stacklens.control.auth.find_dsn_caller` (the key, its organization's quota, its project's
settings) is reused while both hold: it is younger than :data:`REMEMBER_SECONDS`, and this process has sent no
write to the control store since (:func:`~stacklens.control.db.writes_sent`). So a key revoked, a quota
changed or a project's setting saved through this server takes effect at the next request; through another
process (a CLI command, another API worker of a scaled install) within :data:`REMEMBER_SECONDS`."""

from __future__ import annotations

import threading
import time

from stacklens.control.auth import DsnCaller, find_dsn_caller
from stacklens.control.db import session_scope, writes_sent
from stacklens.settings import Settings

REMEMBER_SECONDS = 1.0
# Unknown keys are remembered too (a misconfigured SDK retries), but never more than this many answers.
MAX_REMEMBERED = 10_000

_lock = threading.Lock()
_answers: dict[tuple[str, str], tuple[float, int, DsnCaller | None]] = {}


def dsn_caller(settings: Settings, raw: str) -> DsnCaller | None:
    """The caller of the DSN key ``raw`` (None: no current app key), remembered as the module says."""
    key = (settings.resolved_database_url, raw)
    now = time.monotonic()
    with _lock:
        found = _answers.get(key)
    if found is not None and now - found[0] < REMEMBER_SECONDS and found[1] == writes_sent():
        return found[2]
    writes = writes_sent()  # before the read: a write during it leaves the answer stale, so not reused
    with session_scope(settings) as session:
        caller = find_dsn_caller(session, raw)
    with _lock:
        if len(_answers) >= MAX_REMEMBERED:
            _answers.clear()
        _answers[key] = (now, writes, caller)
    return caller
