"""Browser and OS families from a User-Agent header, for browser events without ``contexts.browser``."""

from __future__ import annotations

import pytest

from stacklens.ingest.useragent import parse_user_agent

CHROME_WINDOWS = (
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/131.0.0.0 Safari/537.36"
)
EDGE = CHROME_WINDOWS + " Edg/131.0.2903.86"
SAFARI_IPHONE = (
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
    "Version/17.4 Mobile/15E148 Safari/604.1"
)
FIREFOX_LINUX = "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0"
SAMSUNG_ANDROID = (
    "Mozilla/5.0 (Linux; Android 14; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) "
    "SamsungBrowser/25.0 Chrome/121.0.0.0 Mobile Safari/537.36"
)


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        (CHROME_WINDOWS, ("Chrome", "131.0.0.0", "Windows", "10.0")),
        # Edge announces Chrome and Safari too: the first family that matches wins.
        (EDGE, ("Edge", "131.0.2903.86", "Windows", "10.0")),
        (SAFARI_IPHONE, ("Safari", "17.4", "iOS", "17.4")),
        (FIREFOX_LINUX, ("Firefox", "133.0", "Linux", "")),
        (SAMSUNG_ANDROID, ("Samsung Internet", "25.0", "Android", "14")),
        ("curl/8.5.0", ("Other", "", "Other", "")),
        ("", ("", "", "", "")),
    ],
)
def test_families_and_versions(header: str, expected: tuple[str, str, str, str]) -> None:
    assert parse_user_agent(header) == expected
