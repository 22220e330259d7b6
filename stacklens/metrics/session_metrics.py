"""The catalog's metrics of sessions (release health): crash-free rates and session counts;
:mod:`stacklens.metrics.catalog` holds them all, in order."""

from __future__ import annotations

from stacklens.metrics.definition import (
    RAW_ROWS,
    SUM_COUNT,
    UNIQ_STATES,
    Metric,
    State,
)
from stacklens.metrics.units import COUNT, PERCENT

_RELEASES = "release health, releases API"


SESSION_METRICS: tuple[Metric, ...] = (
    *(
        # Release health (stacklens.releases, docs/releases.md): from the session states, per release and
        # environment; counted as Relay counts sessions.
        Metric(
            "crash_free_sessions",
            "Crash-free sessions",
            "Crash-free sessions",
            PERCENT,
            ("avg",),
            "avg",
            "Share of a release's sessions that did not end in a crash (abnormal sessions are not crashes).",
            "crash_free_sessions",
            (State("session_periods", ("sessions", "crashed"), SUM_COUNT, _RELEASES),),
            decimals=2,
            fixed_statistic=True,
            kind="sessions",
            higher_is_better=True,
        ),
        Metric(
            "crash_free_users",
            "Crash-free users",
            "Crash-free users",
            PERCENT,
            ("avg",),
            "avg",
            "Share of a release's users (distinct user ids of its sessions) none of whose sessions crashed.",
            "crash_free_users",
            (State("session_periods", ("users", "crashed_users"), UNIQ_STATES, _RELEASES),),
            decimals=2,
            fixed_statistic=True,
            kind="sessions",
            higher_is_better=True,
        ),
        Metric(
            "errored_sessions_pct",
            "Errored sessions",
            "Errored sessions",
            PERCENT,
            ("avg",),
            "avg",
            "Share of a release's sessions that saw an error: handled or not, crashed and abnormal ones included.",
            "errored_sessions",
            (State("session_periods", ("sessions", "errored"), SUM_COUNT, _RELEASES),),
            fixed_statistic=True,
            kind="sessions",
        ),
        Metric(
            "sessions",
            "Sessions",
            "Sessions",
            COUNT,
            ("count",),
            "count",
            "Sessions started: a browser page load or a server request as the SDKs count them.",
            "sessions",
            (State("session_periods", ("sessions",), SUM_COUNT, _RELEASES),),
            fixed_statistic=True,
            kind="sessions",
        ),
        Metric(
            "users",
            "Users",
            "Users",
            COUNT,
            ("count",),
            "count",
            "Distinct users (the SDKs' user ids) of the sessions; sessions without a user id count no user.",
            "users",
            (State("session_periods", ("users",), UNIQ_STATES, _RELEASES),),
            fixed_statistic=True,
            kind="sessions",
        ),
        Metric(
            "adoption",
            "Adoption",
            "Adoption",
            PERCENT,
            ("avg",),
            "avg",
            "Share of the environment's sessions of the last 24 hours that ran the release.",
            "adoption",
            (State("session_periods", ("sessions",), SUM_COUNT, _RELEASES),),
            fixed_statistic=True,
            kind="sessions",
            higher_is_better=True,
        ),
        Metric(
            "errors_per_session",
            "Errors per session",
            "Errors per session",
            COUNT,
            ("avg",),
            "avg",
            "Error events of a release per session of the same window and environment.",
            "errors_per_session",
            (
                State("events", ("event_id",), RAW_ROWS, _RELEASES),
                State("session_periods", ("sessions",), SUM_COUNT, _RELEASES),
            ),
            decimals=2,
            fixed_statistic=True,
            kind="sessions",
        ),
    ),
)
