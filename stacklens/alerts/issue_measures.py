"""Per-issue measurements of many ``event_frequency`` and ``new_issue`` rules with one scan of ``events``.

``events`` is ordered by (project, fingerprint, timestamp): a time window cannot use its primary key, and a
window query read every granule of its projects' partition (0.6–1.6 s per query at 10M events on a loaded
2-core machine). The projection ``events_by_time`` (migration 0010: project, time, issue, user, release,
level, environment, tags, ordered by project and time) answers such a scan from the window's rows only
(~30–80 ms). Rules of the same type but with other windows or filters also share one scan: every rule group
becomes a condition (its projects, its window start, its filters), aggregated with the ``-If`` combinators
over the widest window. Titles come from ``issue_live_counters``. New issues first take their candidates from
there (one row per issue, first seen), and read events only when a group filters on environment, release,
level or tag.

The queries are named (``queries/alerts/``); their conditions are composed from the constant fragments below
and numbered parameter names only; every value is a server-side parameter.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from typing import Any

from stacklens.control.models.alerts import AlertRule
from stacklens.metrics import windows
from stacklens.metrics.windows import Window
from stacklens.warehouse.queries import load_query

FILTERS = {
    "environment": "environment = {environment:String}",
    "release": "release = {release:String}",
    "level": "level = {level:String}",
    "tag": "tags[{tag_key:String}] = {tag_value:String}",
}
ISSUE_FILTERS = ("environment", "release", "level", "tag")
_PARAM = re.compile(r"\{(\w+):")


def filter_sql(
    rule: AlertRule, allowed: tuple[str, ...], prefix: str = "", suffix: str = ""
) -> tuple[str, dict[str, Any]]:
    """`` AND …`` conditions for the rule's filters and their parameters (names end in ``suffix``)."""
    parts, params = [], {}
    filters = dict(rule.filters or {})
    if rule.environment:
        filters["environment"] = rule.environment
    for name in allowed:
        value = filters.get(name)
        if not value:
            continue
        parts.append(prefix + _PARAM.sub(lambda m: "{" + m.group(1) + suffix + ":", FILTERS[name]))
        if name == "tag":
            params["tag_key" + suffix], params["tag_value" + suffix] = value.split(":", 1)
        else:
            params[name + suffix] = value
    return "".join(f" AND {p}" for p in parts), params


def _condition(i: int, group: list[AlertRule], since: datetime) -> tuple[str, dict[str, Any]]:
    filters, params = filter_sql(group[0], ISSUE_FILTERS, suffix=f"_{i}")
    params[f"p_{i}"] = sorted({r.project_id for r in group})
    params[f"s_{i}"] = since
    return (
        f"project_id IN {{p_{i}:Array(UInt64)}} AND timestamp >= {{s_{i}:DateTime64(3, 'UTC')}}{filters}",
        params,
    )


def window_of(rule: AlertRule, now: datetime) -> Window:
    """The window a per-issue rule counts at ``now``: its length, rolling, cut as every window is
    (stacklens.metrics.windows), so "100 events in 1h" counts what the issue list's and Explore's windows
    count."""
    return windows.rolling(timedelta(seconds=rule.window_seconds), now)


def _projects(groups: Iterable[list[AlertRule]]) -> list[int]:
    return sorted({r.project_id for g in groups for r in g})


def frequencies(
    client: Any, groups: list[list[AlertRule]], now: datetime
) -> list[dict[int, list[tuple[int, int, int, str, str]]]]:
    """Per group: project → [(issue id, events, distinct users, first release, latest title)] in its
    window."""
    out: list[dict[int, list[tuple[int, int, int, str, str]]]] = [{} for _ in groups]
    found = dict(enumerate(_scan(client, groups, now)))
    issue_ids = sorted({row[1] for rows in found.values() for row in rows})
    titles: dict[int, str] = {}
    if issue_ids:
        result = client.query(
            load_query("alerts/issue_titles"),
            parameters={"project_ids": _projects(groups), "issue_ids": issue_ids},
        ).result_rows
        titles = {int(issue_id): str(title) for issue_id, title in result}
    for i, rows in found.items():
        for project_id, issue_id, events, users, release in rows:
            out[i].setdefault(project_id, []).append(
                (issue_id, events, users, release, titles.get(issue_id, ""))
            )
    return out


def _scan(
    client: Any, groups: list[list[AlertRule]], now: datetime
) -> list[list[tuple[int, int, int, int, str]]]:
    cuts = [window_of(g[0], now) for g in groups]
    sinces = [c.since for c in cuts]
    # Every group's window ends at the same whole minute (the windows' rule), the scan's end.
    columns, hits, params = (
        [],
        [],
        {"project_ids": _projects(groups), "since": min(sinces), "until": cuts[0].until},
    )
    for i, (group, since) in enumerate(zip(groups, sinces, strict=True)):
        cond, extra = _condition(i, group, since)
        params.update(extra)
        columns.append(
            f"countIf({cond}), uniqExactIf(user_key, {cond} AND user_key != ''), argMinIf(release, timestamp, {cond})"
        )
        hits.append(f"countIf({cond}) > 0")
    sql = (
        load_query("alerts/issue_frequencies")
        .replace("{columns}", ", ".join(columns))
        .replace("{hits}", " OR ".join(hits))
    )
    out: list[list[tuple[int, int, int, int, str]]] = [[] for _ in groups]
    for row in client.query(sql, parameters=params).result_rows:
        for i in range(len(groups)):
            events, users, release = row[2 + 3 * i : 5 + 3 * i]
            if events:
                out[i].append((int(row[0]), int(row[1]), int(events), int(users), str(release)))
    return out


def new_issues(
    client: Any, groups: list[list[AlertRule]], now: datetime
) -> list[dict[int, list[tuple[int, str, str]]]]:
    """Per group: project → [(issue id, title, release)] of issues first seen in its window (with an event
    matching its filters there)."""
    sinces = [window_of(g[0], now).since for g in groups]
    candidates = client.query(
        load_query("alerts/new_issue_candidates"),
        parameters={"project_ids": _projects(groups), "since": min(sinces)},
    ).result_rows
    out: list[dict[int, list[tuple[int, str, str]]]] = [{} for _ in groups]
    if not candidates:
        return out
    filtered = [i for i, g in enumerate(groups) if filter_sql(g[0], ISSUE_FILTERS)[0]]
    matching: dict[tuple[int, int], set[int]] = {}
    if filtered:
        # Only the candidates' events are read (bloom-filter index on issue_id), in the widest window.
        columns, params = (
            [],
            {
                "project_ids": _projects(groups[i] for i in filtered),
                "issue_ids": sorted({int(c[1]) for c in candidates}),
                "since": min(sinces[i] for i in filtered),
            },
        )
        for i in filtered:
            cond, extra = _condition(i, groups[i], sinces[i])
            params.update(extra)
            columns.append(f"countIf({cond})")
        sql = load_query("alerts/new_issue_matches").replace("{columns}", ", ".join(columns))
        for row in client.query(sql, parameters=params).result_rows:
            matching[(int(row[0]), int(row[1]))] = {i for i, n in zip(filtered, row[2:], strict=True) if n}
    for project_id, issue_id, first, title, release in candidates:
        key = (int(project_id), int(issue_id))
        first = first if first.tzinfo else first.replace(tzinfo=UTC)  # the engine answers naive UTC times
        for i, group in enumerate(groups):
            in_group = key[0] in {r.project_id for r in group}
            if not in_group or first < sinces[i] or (i in filtered and i not in matching.get(key, set())):
                continue
            out[i].setdefault(key[0], []).append((key[1], str(title), str(release or "")))
    return out
