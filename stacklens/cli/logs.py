"""Where the server's log records go: configured once, here in the composition root.

Every module logs through its own ``logging.getLogger(__name__)`` and never configures logging itself; the
``stacklens`` command calls :func:`configure_logging` once before running a command. Records of the server's
packages go to stderr with time, level and logger name, so an operator can tell startup, refused batches, an
unreachable warehouse and failed pipeline runs apart. What a command prints for its user (results,
``--json``) stays on stdout and never passes through here.
"""

from __future__ import annotations

import logging
import sys
from typing import TextIO

# The server's packages; third-party loggers (uvicorn, dagster) keep their own configuration.
SERVER_LOGGERS = ("stacklens", "api", "dashboards", "pipelines")
LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class _ServerHandler(logging.StreamHandler[TextIO]):
    """The handler this module installs (so configuring twice never duplicates lines).

    Without an explicit stream it writes to whatever ``sys.stderr`` is when a record arrives, so a replaced
    stderr (a test runner's capture, a daemonised process) is followed instead of written to after it closed.
    """

    def __init__(self, stream: TextIO | None) -> None:
        super().__init__(stream or sys.stderr)
        self._follow_stderr = stream is None

    def emit(self, record: logging.LogRecord) -> None:
        if self._follow_stderr:
            self.stream = sys.stderr
        super().emit(record)


def configure_logging(level: int = logging.INFO, stream: TextIO | None = None) -> None:
    """Send the server packages' records at ``level`` and above to ``stream`` (default stderr).

    Calling it again replaces the handler instead of adding a second one.
    """
    handler = _ServerHandler(stream)
    handler.setFormatter(logging.Formatter(LOG_FORMAT))
    for name in SERVER_LOGGERS:
        logger = logging.getLogger(name)
        logger.handlers[:] = [h for h in logger.handlers if not isinstance(h, _ServerHandler)] + [handler]
        logger.setLevel(level)
