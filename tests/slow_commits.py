"""Control-store commits made slow on purpose, to show whether a server answers before or after it commits.

A server that commits after sending its answer (FastAPI's default for dependencies with ``yield``) lets a
client that follows a redirect, or reads what it just wrote, arrive before the write: on a busy machine a
sign-in then lands on the sign-in page again. Delaying every commit a server thread makes turns that race
into a certainty, so a test of "committed before the answer" cannot pass by luck.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import event
from sqlalchemy.orm import Session

from stacklens.control.keys.use_tally import WRITER_THREAD_NAME as KEY_USE_WRITER


@contextmanager
def slow_server_commits(seconds: float = 0.5) -> Iterator[list[float]]:
    """Within the block, every commit of a control-store session outside the main (test) thread waits
    ``seconds`` first; the test's own sessions commit at once. Yields the list of the moments
    (``time.monotonic()``) at which those server commits finished, filled as they do."""
    main = threading.main_thread()
    finished: list[float] = []

    def served(thread: threading.Thread) -> bool:
        # The key-use writer commits use counts a second after the requests on purpose
        # (stacklens/control/keys/use_tally.py): not a request's commit.
        return thread is not main and thread.name != KEY_USE_WRITER

    def wait(_session: Session) -> None:
        if served(threading.current_thread()):
            time.sleep(seconds)

    def record(_session: Session) -> None:
        if served(threading.current_thread()):
            finished.append(time.monotonic())

    event.listen(Session, "before_commit", wait)
    event.listen(Session, "after_commit", record)
    try:
        yield finished
    finally:
        event.remove(Session, "before_commit", wait)
        event.remove(Session, "after_commit", record)
