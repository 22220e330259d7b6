"""The delivery loop's wake-up: set from a signal handler, waited on by the loop.

A ``threading.Event`` cannot be set from a signal handler: its ``set`` takes a lock that the interrupted
``wait`` or ``clear`` of the same thread may be holding, and the handler then blocks on it for good (SIGTERM
then waited out the whole shutdown grace period, and a SIGHUP at that moment hung the shipper). A pipe needs
no lock: the handler writes a byte, the loop waits for the pipe to be readable and empties it."""

from __future__ import annotations

import contextlib
import os
import select
import weakref

# FD_SETSIZE: the first descriptor number select(2) cannot wait on.
_SELECT_LIMIT = 1024


class Wake:
    """``set`` / ``wait`` / ``clear`` as on ``threading.Event``, safe to ``set`` from a signal handler."""

    def __init__(self) -> None:
        self._read, self._write = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        weakref.finalize(self, _close, self._read, self._write)

    def set(self) -> None:
        # A full pipe means a wake-up is waiting already.
        with contextlib.suppress(BlockingIOError):
            os.write(self._write, b"!")

    def wait(self, timeout: float) -> bool:
        """True when woken (now or earlier, and not cleared since), False when ``timeout`` passed."""
        if self._read < _SELECT_LIMIT:
            readable, _, _ = select.select([self._read], [], [], max(timeout, 0.0))
            return bool(readable)
        # select refuses a descriptor numbered past 1,023, which a process with many open files reaches (an
        # agent beside a busy application); poll has no such limit (its timeout is in whole milliseconds).
        poller = select.poll()
        poller.register(self._read, select.POLLIN)
        return bool(poller.poll(max(timeout, 0.0) * 1000))

    def clear(self) -> None:
        with contextlib.suppress(BlockingIOError):
            while os.read(self._read, 4096):
                pass


def _close(*fds: int) -> None:
    for fd in fds:
        os.close(fd)
