"""What a new user reads on the issue page: breadcrumbs in one time format and in words, categories that
filter by prefix, environment information from the SDKs' contexts, and an events chart with every bucket."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from itertools import pairwise
from pathlib import Path

import stacklens_sdk
from stacklens.issues import payload_view as ev
from stacklens.issues.events import bucket_seconds, fill_buckets


def test_python_event_from_the_sdk_has_runtime_os_and_memory(tmp_path: Path) -> None:
    key = "stacklens_app_" + "A" * 24
    stacklens_sdk.init(app_key=key, storage_path=str(tmp_path))
    try:
        try:
            raise ValueError("boom")
        except ValueError:
            stacklens_sdk.capture_exception()
        stacklens_sdk.flush()
    finally:
        stacklens_sdk.close()
    (line,) = [json.loads(x) for f in tmp_path.glob("stacklens-*.log") for x in f.read_text().splitlines()]
    info = ev.environment_info(line["payload"])
    assert info["runtime"].startswith("CPython 3.")
    assert info["os"] and info["memory"].endswith("MiB"), info


def test_browser_event_runtime_and_os_from_contexts_or_user_agent() -> None:
    safari = "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_6) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15"
    bare = {
        "platform": "javascript",
        "request": {"headers": {"User-Agent": safari}},
        "sdk": {"name": "sentry.javascript.react"},
    }
    info = ev.environment_info(bare)
    assert info["runtime"] == "Safari 18.1" and info["os"] == "Mac OS X 14.6" and info["framework"] == "React"
    with_contexts = {
        **bare,
        "contexts": {
            "browser": {"name": "Safari", "version": "18.1"},
            "os": {"name": "macOS", "version": "14.6"},
        },
    }
    assert ev.environment_info(with_contexts)["os"] == "macOS 14.6"


def test_demo_browser_events_are_consistent() -> None:
    from demo.browser import BROWSER_CONTEXTS, USER_AGENTS, browser_contexts
    from stacklens.ingest.useragent import parse_user_agent

    for browser, agent in USER_AGENTS.items():
        name, _, os_name, _ = parse_user_agent(agent)
        contexts = browser_contexts(browser)
        assert contexts["browser"]["name"] == name == browser
        assert os_name.startswith(contexts["os"]["name"].split()[0]), (os_name, contexts)
    assert set(BROWSER_CONTEXTS) == set(USER_AGENTS)


def test_every_bucket_is_drawn() -> None:
    until = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
    since = until - timedelta(days=14)
    bucket = bucket_seconds(since, until)
    rows = [
        {"bucket": datetime(2026, 11, 10, tzinfo=None), "events": 3},  # naive UTC as the driver returns it
        {"bucket": datetime(2026, 11, 21, tzinfo=UTC), "events": 1},
    ]
    filled = fill_buckets(rows, since, until, bucket)
    assert len(filled) == 15 and sum(r["events"] for r in filled) == 4
    assert [r["events"] for r in filled].count(0) == 13
    steps = {(b["bucket"] - a["bucket"]).total_seconds() for a, b in pairwise(filled)}
    assert steps == {86400.0}
