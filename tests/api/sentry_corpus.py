"""Events of many platforms, shaped as their Sentry SDKs send them (``sentry_corpus.json``: the Sentry
protocol's documented payload interfaces: exception, threads, stacktrace frames, logentry, contexts,
debug_meta, security reports).

Each builder returns a fresh payload with a new event id and the current time. The real-SDK events of the
suite (sentry-python, @sentry/node, @sentry/browser, sentry-cli) complete them in the tests.
"""

from __future__ import annotations

import copy
import json
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

_EVENTS: dict[str, dict[str, Any]] = json.loads(Path(__file__).with_name("sentry_corpus.json").read_text())[
    "events"
]


def _fresh(name: str) -> Callable[[], dict[str, Any]]:
    def build() -> dict[str, Any]:
        return {"event_id": uuid.uuid4().hex, "timestamp": time.time(), **copy.deepcopy(_EVENTS[name])}

    return build


CORPUS: dict[str, Callable[[], dict[str, Any]]] = {name: _fresh(name) for name in _EVENTS}
