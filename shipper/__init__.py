"""The StackLens shipper: reads the SDK's daily log files and delivers them to the service.

It runs on application hosts and installs with the light base (httpx, pyyaml, zstandard); it must never
import server-side packages.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("stacklens")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0"
