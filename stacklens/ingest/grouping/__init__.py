"""Grouping: which issue an error event belongs to, as a registry of frozen, versioned algorithms.

Each version is its own module (``v1.py``, ``v2.py``, ``v3.py``) and never changes once released: an event's
fingerprint is stored with the version that made it (``events.grouping_version``), and the issue id derives
from the fingerprint, so editing a released version would split every existing issue in two. A grouping
change is a new module added to :data:`GROUPERS`; :data:`DEFAULT_VERSION` says which one ingest uses.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from stacklens.ingest.grouping import v1, v2, v3
from stacklens.ingest.grouping.v1 import Grouping

__all__ = [
    "DEFAULT_VERSION",
    "GROUPERS",
    "SOURCEMAPPED_VERSION",
    "Grouping",
    "fingerprint_event",
    "grouper",
    "issue_id_for",
]

Grouper = Callable[[dict[str, Any]], Grouping]

# version (as stored in events.grouping_version) -> the function that groups one payload
GROUPERS: Mapping[str, Grouper] = MappingProxyType(
    {
        v1.GROUPING_VERSION: v1.fingerprint_event,
        v2.GROUPING_VERSION: v2.fingerprint_event,
        v3.GROUPING_VERSION: v3.fingerprint_event,
    }
)

# The version new events are grouped with. v2 gives the same fingerprints as v1 wherever v1 found an exception
# with frames or a message (the components are equal), so switching kept every existing issue of those.
DEFAULT_VERSION = v2.GROUPING_VERSION
# The version of an event whose frames uploaded source maps resolved at ingest (v2 over the original frames,
# recorded in the payload): see :mod:`stacklens.ingest.grouping.v3`.
SOURCEMAPPED_VERSION = v3.GROUPING_VERSION


def grouper(version: str) -> Grouper:
    """The grouping function of ``version``; an unknown version is a clear error, never a silent default."""
    try:
        return GROUPERS[version]
    except KeyError:
        known = ", ".join(sorted(GROUPERS))
        raise ValueError(f"unknown grouping version {version!r} (known: {known})") from None


def fingerprint_event(payload: dict[str, Any], version: str = DEFAULT_VERSION) -> Grouping:
    """The grouping of one error event (payload as the SDK sent it) by ``version``."""
    return grouper(version)(payload)


def issue_id_for(project_id: int, fingerprint: str) -> int:
    """The issue id of a fingerprint in a project: 52 bits of SHA-256, exact in JavaScript numbers.

    The same for every grouping version: versions differ in the fingerprint, never in this derivation.
    """
    return int(hashlib.sha256(f"{project_id}:{fingerprint}".encode()).hexdigest()[:13], 16)
