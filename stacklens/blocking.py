"""Steps that may block, marked so that work run on the server's event loop can step aside.

A one-event request's admission (its key, its envelope read, its rows prepared, its quotas) is a few tenths
of a millisecond of work under the interpreter lock. Handed to a thread, it paid two thread switches and a
turn at the lock each way, which cost the server more than the work itself; so the entrances run a small
request's admission on the event loop (``api/admission.py``), inside :func:`loop_only`. Every step that
could wait or run long — a control-store session, a warehouse read, a Redis call, a decompression slot
taken, a source map loaded, a body inflating past :data:`LOOP_INFLATE_BYTES` — first calls
:func:`may_block`, which there raises :class:`WouldBlock`; the entrance then runs the admission again on its
threads. Those steps all come before any effect of an admission (its quotas are spent last, and a refusal's
note is a control-store write, itself marked), so running it again changes nothing but where it runs.

The warehouse clients mark their own calls (every query, insert and command of a client that
``stacklens.warehouse.client`` hands out calls :func:`may_block` first): a warehouse read added to work that
runs on the loop steps aside even where nobody marked it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

# How much a body may inflate to while admitted on the event loop (a Sentry event is 2–30 KiB inflated).
LOOP_INFLATE_BYTES = 256 * 1024

_loop_only: ContextVar[bool] = ContextVar("stacklens_loop_only", default=False)


class WouldBlock(BaseException):
    """A step that may block was reached inside :func:`loop_only`.

    A ``BaseException``: steps that catch their own failures (a source-map read that fails lands the batch
    without maps) catch ``Exception``, and must not take this for one."""


@contextmanager
def loop_only() -> Iterator[None]:
    """A section run on the event loop: a step that may block raises :class:`WouldBlock` instead."""
    token = _loop_only.set(True)
    try:
        yield
    finally:
        _loop_only.reset(token)


def may_block(what: str) -> None:
    """Called before a step that may wait or run long (``what`` names it); inside :func:`loop_only` it raises
    :class:`WouldBlock`, elsewhere it does nothing."""
    if _loop_only.get():
        raise WouldBlock(what)


def on_loop() -> bool:
    """Whether the caller runs inside :func:`loop_only` (a step that can choose not to wait asks this)."""
    return _loop_only.get()
