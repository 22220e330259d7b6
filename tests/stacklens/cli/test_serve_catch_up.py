"""`stacklens serve`'s hidden catch-up interval (STACKLENS_PIPELINES_CATCH_UP_INTERVAL): unset, the runner
keeps its defaults; set, the schedules thread starts its catch-up passes that often and wakes at least as
often."""

from __future__ import annotations

from typing import Any

import pytest

from stacklens.cli import serve
from stacklens.settings import Settings


def test_unset_or_blank_keeps_the_runner_defaults() -> None:
    assert serve.catch_up_interval({}) is None
    assert serve.catch_up_interval({serve.CATCH_UP_INTERVAL_ENV: " "}) is None


@pytest.mark.parametrize("raw", ["0", "-1", "nan", "soon"])
def test_anything_but_a_positive_number_is_refused(raw: str) -> None:
    with pytest.raises(ValueError, match=serve.CATCH_UP_INTERVAL_ENV):
        serve.catch_up_interval({serve.CATCH_UP_INTERVAL_ENV: raw})


def test_the_served_runner_takes_the_interval(monkeypatch: pytest.MonkeyPatch, settings: Settings) -> None:
    class App:
        class state:  # noqa: N801 - the attribute namespace a Starlette app has
            pipelines_runner: Any = None
            pipelines_token: Any = None

    runners: dict[str, Any] = {}
    for raw, name in (("0.5", "short"), ("30", "long"), (None, "default")):
        if raw is None:
            monkeypatch.delenv(serve.CATCH_UP_INTERVAL_ENV, raising=False)
        else:
            monkeypatch.setenv(serve.CATCH_UP_INTERVAL_ENV, raw)
        with serve.serve_pipelines(settings, App(), "127.0.0.1", 1):
            runners[name] = App.state.pipelines_runner
    short, long, default = runners["short"], runners["long"], runners["default"]
    assert (short.catch_up_interval, short.poll_seconds) == (0.5, 0.5)
    assert (long.catch_up_interval, long.poll_seconds) == (30.0, 5.0)  # woken as often as by default
    assert (default.catch_up_interval, default.poll_seconds) == (10.0, 5.0)
    assert not any(runner.running for runner in runners.values())  # `settings` runs no schedules
