"""Control-store answers remembered for a moment: the one-event-per-request roads (every Sentry SDK sends one
event per envelope; a shipper may send one line per batch) read a key or a project's quota about once a second
instead of once per request.

An answer is reused while both hold: it is younger than its :class:`Remembered`'s ``seconds``, and this
process has sent no write to the control store since (:func:`~stacklens.control.db.writes_sent`). So a key
revoked, a quota changed or a project's setting saved through this server takes effect at the next request;
through another process (a CLI command, another API worker of a scaled install) within ``seconds``."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

from stacklens.blocking import may_block
from stacklens.control.db import writes_sent

REMEMBER_SECONDS = 1.0
# Unknown keys are remembered too (a misconfigured SDK retries), but never more than this many answers.
MAX_REMEMBERED = 10_000

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class Remembered(Generic[K, V]):
    """Answers by key, each reused as the module says."""

    def __init__(self, seconds: float = REMEMBER_SECONDS) -> None:
        self.seconds = seconds
        self._lock = threading.Lock()
        self._answers: dict[K, tuple[float, int, V]] = {}

    def answer(self, key: K, read: Callable[[], V]) -> V:
        """The answer remembered for ``key``, or ``read()``'s (then remembered)."""
        now = time.monotonic()
        with self._lock:
            found = self._answers.get(key)
        if found is not None and now - found[0] < self.seconds and found[1] == writes_sent():
            return found[2]
        may_block("a control-store read")
        writes = writes_sent()  # before the read: a write during it leaves the answer stale, so not reused
        value = read()
        with self._lock:
            if len(self._answers) >= MAX_REMEMBERED:
                self._answers.clear()
            self._answers[key] = (now, writes, value)
        return value
