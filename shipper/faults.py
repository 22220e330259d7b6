"""Fault injection for the shipper's own crash tests. Off unless ``STACKLENS_SHIPPER_FAULT`` is set.

``STACKLENS_SHIPPER_FAULT=<point>:<n>`` kills the process with SIGKILL the n-th time it reaches ``point``
(n defaults to 1). Points, in delivery order:

- ``after_send``: the request went out and the service answered, before the answer is looked at
  (from the tracker's point of view this is "sent, no response yet").
- ``after_ack``: a 2xx was handled, before the tracker is written.
- ``mid_tracker_write``: half of the new tracker generation is on disk in the temporary file.
- ``after_tracker_write``: the new tracker generation was renamed into place, before the directory fsync.

And in ``--resend-dead-letters`` (besides ``after_send``, which it shares):

- ``after_resend_answer``: the service's answer to a batch is in the journal, the dead letters untouched.
- ``before_dead_letter_rewrite``: every answer is in the journal, before the dead letters are rewritten.
- ``mid_dead_letter_rewrite``: the rewritten dead letters are synced in the temporary file, not renamed yet.

This is a test hook: production configs never set the variable, and with it unset :func:`hit` is one
dictionary lookup.
"""

from __future__ import annotations

import os
import signal

_SPEC = os.environ.get("STACKLENS_SHIPPER_FAULT", "")
_POINT, _, _COUNT = _SPEC.partition(":")
_REMAINING = {_POINT: int(_COUNT or "1")} if _POINT else {}


def hit(point: str) -> None:
    """Die here (SIGKILL, no cleanup) when the fault spec names ``point`` and its count is reached."""
    if point not in _REMAINING:
        return
    _REMAINING[point] -= 1
    if _REMAINING[point] <= 0:
        os.kill(os.getpid(), signal.SIGKILL)
