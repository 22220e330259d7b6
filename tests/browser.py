"""Shared by the browser tests: how to start Debian's chromium on this machine.

`playwright install` cannot download a browser here, so the tests drive the system's `/usr/bin/chromium`.
The flags keep it headless and stop its background connections, which a closed network refuses.
"""

from __future__ import annotations

CHROMIUM_PATH = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
