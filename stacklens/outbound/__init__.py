"""Calls to the outside (docs/architecture.md §8): webhooks, Slack, trackers, identity providers, uptime
checks.

Every call goes through one client and is bounded the same way:

- :mod:`.guard` says what a target's host means and refuses loopback, private, link-local and reserved
  addresses unless the operator's allow-list (``STACKLENS_OUTBOUND_ALLOW``) names them;
  :func:`validate_target` is the same guard for a URL being stored;
- :mod:`.transport` connects only to the addresses the guard checked (no second DNS answer, TLS verified
  for the name) and holds each read to what is left of the call's total deadline;
- :mod:`.backoff` is the one schedule of retries (exponential with jitter, ``Retry-After`` honoured), for the
  outbox and for in-call retries alike;
- :mod:`.client` is the client over them: :class:`OutboundClient` resolves once, checks, connects, streams
  the answer up to a cap and retries when asked.

Callers import these names from the package; the modules import each other, never the package, so nothing
here runs in a circle.
"""

from __future__ import annotations

from stacklens.outbound.backoff import backoff_delay, parse_retry_after
from stacklens.outbound.client import AnswerTooLarge, OutboundClient, OutboundResponse
from stacklens.outbound.guard import AllowList, OutboundRefused, validate_target
from stacklens.outbound.transport import DeadlinePassed

__all__ = [
    "AllowList",
    "AnswerTooLarge",
    "DeadlinePassed",
    "OutboundClient",
    "OutboundRefused",
    "OutboundResponse",
    "backoff_delay",
    "parse_retry_after",
    "validate_target",
]
