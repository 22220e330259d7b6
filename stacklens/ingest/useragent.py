"""Browser and OS from a User-Agent header, for browser SDK events that send no ``contexts.browser``.

Only the families the dashboards break figures down by; anything else is ``Other``. Order matters: Edge and
Opera announce Chrome, Chrome announces Safari.
"""

from __future__ import annotations

import re
from functools import lru_cache

_BROWSERS = [
    ("Edge", re.compile(r"Edg(?:e|A|iOS)?/([\d.]+)")),
    ("Opera", re.compile(r"OPR/([\d.]+)")),
    ("Samsung Internet", re.compile(r"SamsungBrowser/([\d.]+)")),
    ("Firefox", re.compile(r"(?:Firefox|FxiOS)/([\d.]+)")),
    ("Chrome", re.compile(r"(?:Chrome|CriOS)/([\d.]+)")),
    ("Safari", re.compile(r"Version/([\d.]+).*Safari/")),
]
_OS = [
    ("iOS", re.compile(r"(?:iPhone|iPad|iPod).*? OS ([\d_]+)")),
    ("Android", re.compile(r"Android ([\d.]+)")),
    ("Windows", re.compile(r"Windows NT ([\d.]+)")),
    ("Mac OS X", re.compile(r"Mac OS X ([\d_.]+)")),
    ("Chrome OS", re.compile(r"CrOS \S+ ([\d.]+)")),
    ("Linux", re.compile(r"Linux()")),
]


@lru_cache(maxsize=4096)
def parse_user_agent(user_agent: str) -> tuple[str, str, str, str]:
    """``(browser, browser_version, os, os_version)``; empty strings when there is no header."""
    if not user_agent:
        return "", "", "", ""
    browser, browser_version = "Other", ""
    for name, pattern in _BROWSERS:
        match = pattern.search(user_agent)
        if match:
            browser, browser_version = name, match.group(1)
            break
    os_name, os_version = "Other", ""
    for name, pattern in _OS:
        match = pattern.search(user_agent)
        if match:
            os_name, os_version = name, match.group(1).replace("_", ".")
            break
    return browser, browser_version, os_name, os_version
