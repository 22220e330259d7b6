"""The host's operating system and memory, as the ``os`` and ``device`` contexts of every event.

sentry-python sends the ``runtime`` context on its own but not these (a server SDK leaves them to the
platform); the issue view's environment information (the spec: runtime, framework, OS, server, memory)
needs them. Read once at ``init``: neither changes while the process runs.
"""

from __future__ import annotations

import os
import platform
from typing import Any


def _total_memory() -> int | None:
    try:
        pages, size = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, OSError, ValueError):  # not on this platform
        return None
    return pages * size if pages > 0 and size > 0 else None


def host_contexts() -> dict[str, dict[str, Any]]:
    """``{"os": {...}, "device": {...}}`` in Sentry's context shapes."""
    system = platform.system()
    os_ctx: dict[str, Any] = {"name": {"Darwin": "macOS"}.get(system, system) or "unknown"}
    if system == "Linux":
        try:
            release = platform.freedesktop_os_release()
            os_ctx["name"] = release.get("NAME", "Linux")
            if release.get("VERSION_ID"):
                os_ctx["version"] = release["VERSION_ID"]
        except OSError:
            pass
        os_ctx["kernel_version"] = platform.release()
    elif platform.release():
        os_ctx["version"] = platform.mac_ver()[0] if system == "Darwin" else platform.release()
    device: dict[str, Any] = {"arch": platform.machine()}
    memory = _total_memory()
    if memory:
        device["memory_size"] = memory
    return {"os": os_ctx, "device": device}
