"""Every figure kept at insert time (and the marts and alert measures built on them) beside what a direct
query of the stored events gives: the tests' definition of "the counters equal the events".

:func:`differences` answers, per figure, the rows of either side that the other lacks; ``{}`` when every
figure equals the events. Latest-value states (``argMax`` titles) are left out: events received together
tie, and a tie may resolve either way on both sides."""

from __future__ import annotations

import json
import sys
from datetime import UTC, date, datetime
from typing import Any

from clickhouse_connect.driver.client import Client

# figure -> (from the insert-time table or mart, from the stored events); both ordered, same columns.
INSERT_TIME: dict[str, tuple[str, str]] = {
    "issue_live_counters": (
        "SELECT issue_id, sum(events), uniqExactMerge(users), min(first_seen), max(last_seen)"
        " FROM issue_live_counters WHERE project_id = {p:UInt64} GROUP BY issue_id ORDER BY issue_id",
        "SELECT issue_id, uniqExact(event_id), uniqExactIf(user_key, user_key != ''), min(timestamp), max(timestamp)"
        " FROM events WHERE project_id = {p:UInt64} GROUP BY issue_id ORDER BY issue_id",
    ),
    "issue_totals_daily": (
        "SELECT issue_id, day, sum(events), uniqMerge(users), min(first_seen), max(last_seen)"
        " FROM issue_totals_daily WHERE project_id = {p:UInt64} GROUP BY issue_id, day ORDER BY issue_id, day",
        "SELECT issue_id, toDate(timestamp) AS day, uniqExact(event_id), uniq(nullIf(user_key, '')),"
        " min(timestamp), max(timestamp) FROM events WHERE project_id = {p:UInt64}"
        " GROUP BY issue_id, day ORDER BY issue_id, day",
    ),
    "issue_facets_daily": (
        "SELECT issue_id, day, toString(environment) AS e, toString(release) AS r, toString(level) AS l,"
        " toString(service) AS s, sum(events), uniqMerge(users), min(first_seen), max(last_seen)"
        " FROM issue_facets_daily WHERE project_id = {p:UInt64}"
        " GROUP BY issue_id, day, e, r, l, s ORDER BY issue_id, day, e, r, l, s",
        "SELECT issue_id, toDate(timestamp) AS day, toString(environment) AS e, toString(release) AS r,"
        " toString(level) AS l, toString(service) AS s, uniqExact(event_id), uniq(nullIf(user_key, '')),"
        " min(timestamp), max(timestamp) FROM events WHERE project_id = {p:UInt64}"
        " GROUP BY issue_id, day, e, r, l, s ORDER BY issue_id, day, e, r, l, s",
    ),
    "issue_tags_daily": (
        "SELECT issue_id, day, toString(tag_key) AS k, tag_value, sum(events) FROM issue_tags_daily"
        " WHERE project_id = {p:UInt64} GROUP BY issue_id, day, k, tag_value ORDER BY issue_id, day, k, tag_value",
        "SELECT issue_id, toDate(timestamp) AS day, toString(k) AS key, v, uniqExact(event_id) FROM events"
        " ARRAY JOIN mapKeys(tags) AS k, mapValues(tags) AS v WHERE project_id = {p:UInt64}"
        " GROUP BY issue_id, day, key, v ORDER BY issue_id, day, key, v",
    ),
    "release_error_counts": (
        "SELECT release, sum(events), min(first_seen) FROM release_error_counts WHERE project_id = {p:UInt64}"
        " GROUP BY release ORDER BY release",
        "SELECT toString(release) AS r, uniqExact(event_id), min(timestamp) FROM events"
        " WHERE project_id = {p:UInt64} AND release != '' GROUP BY r ORDER BY r",
    ),
    "issue_rollup": (
        "SELECT issue_id, min(first_seen), max(last_seen), min(first_release).2, max(last_release).2,"
        " arraySort(groupUniqArrayArray(releases)), arraySort(groupUniqArrayArray(environments))"
        " FROM issue_rollup WHERE project_id = {p:UInt64} GROUP BY issue_id ORDER BY issue_id",
        "SELECT issue_id, min(timestamp), max(timestamp), argMinIf(toString(release), timestamp, release != ''),"
        " argMaxIf(toString(release), timestamp, release != ''),"
        " arraySort(groupUniqArrayIf(toString(release), release != '')),"
        " arraySort(groupUniqArrayIf(toString(environment), environment != ''))"
        " FROM events WHERE project_id = {p:UInt64} GROUP BY issue_id ORDER BY issue_id",
    ),
    "raw_arrival_hours": (
        "SELECT DISTINCT hour FROM raw_arrival_hours WHERE source = 'events' AND project_id = {p:UInt64}"
        " ORDER BY hour",
        "SELECT DISTINCT toStartOfHour(timestamp) AS h FROM events WHERE project_id = {p:UInt64} ORDER BY h",
    ),
}
MARTS: dict[str, tuple[str, str]] = {
    "issue_users": (
        "SELECT issue_id, count() FROM issue_users FINAL WHERE kind = 1 AND project_id = {p:UInt64}"
        " GROUP BY issue_id ORDER BY issue_id",
        "SELECT issue_id, uniqExact(user_key) FROM events WHERE project_id = {p:UInt64} AND user_key != ''"
        " GROUP BY issue_id ORDER BY issue_id",
    ),
    "issues": (
        "SELECT issue_id, events, users_affected, first_seen, last_seen FROM issues FINAL"
        " WHERE project_id = {p:UInt64} ORDER BY issue_id",
        "SELECT issue_id, uniqExact(event_id), uniqExactIf(user_key, user_key != ''), min(timestamp),"
        " max(timestamp) FROM events WHERE project_id = {p:UInt64} GROUP BY issue_id ORDER BY issue_id",
    ),
}


def _plain(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.replace(tzinfo=None).isoformat()
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _rows(client: Client, sql: str, project_id: int) -> list[list[Any]]:
    return [_plain(list(row)) for row in client.query(sql, parameters={"p": project_id}).result_rows]


def _alert_measures(client: Client, project_id: int) -> tuple[list[list[Any]], list[list[Any]]]:
    """What the event-frequency and new-issue rules measure over the last 3 days, and the events' own
    answer."""
    from stacklens.alerts import issue_measures
    from stacklens.control.models.alerts import AlertRule

    now = datetime.now(UTC)
    window = 3 * 86_400
    rules = [
        AlertRule(type=kind, project_id=project_id, window_seconds=window, environment="", filters={})
        for kind in ("event_frequency", "new_issue")
    ]
    measured: list[list[Any]] = [
        [issue_id, events, users]
        for issue_id, events, users, _, _ in issue_measures.frequencies(client, [[rules[0]]], now)[0].get(
            project_id, []
        )
    ]
    measured += [
        ["new", issue_id]
        for issue_id, _, _ in issue_measures.new_issues(client, [[rules[1]]], now)[0].get(project_id, [])
    ]
    # The rules' window and users as the metrics layer defines them: rolling, cut to whole minutes; an event
    # without a user is no user (stacklens.metrics.windows, stacklens.metrics.issue_figures).
    cut = issue_measures.window_of(rules[0], now)
    direct = _plain(
        [
            list(r)
            for r in client.query(
                "SELECT issue_id, count(), uniqExactIf(user_key, user_key != '') FROM events"
                " WHERE project_id = {p:UInt64}"
                " AND timestamp >= {s:DateTime64(3, 'UTC')} AND timestamp < {u:DateTime64(3, 'UTC')}"
                " GROUP BY issue_id",
                parameters={"p": project_id, "s": cut.since, "u": cut.until},
            ).result_rows
        ]
    )
    direct += [
        ["new", r[0]]
        for r in client.query(
            "SELECT issue_id FROM events WHERE project_id = {p:UInt64} GROUP BY issue_id"
            " HAVING min(timestamp) >= {s:DateTime64(3, 'UTC')}",
            parameters={"p": project_id, "s": cut.since},
        ).result_rows
    ]
    return sorted(measured, key=str), sorted(direct, key=str)


def differences(client: Client, project_id: int, *, marts: bool = True) -> dict[str, dict[str, Any]]:
    """Per figure that differs from the events: the rows only the figure has and the rows only the events
    give."""
    figures = {**INSERT_TIME, **(MARTS if marts else {})}
    out: dict[str, dict[str, Any]] = {}
    compared: dict[str, tuple[list[list[Any]], list[list[Any]]]] = {
        name: (_rows(client, kept, project_id), _rows(client, direct, project_id))
        for name, (kept, direct) in figures.items()
    }
    compared["alert_measures"] = _alert_measures(client, project_id)
    for name, (kept, direct) in compared.items():
        if kept != direct:
            out[name] = {
                "kept_only": [r for r in kept if r not in direct][:5],
                "events_only": [r for r in direct if r not in kept][:5],
            }
    return out


def events_stored(client: Client, project_id: int) -> tuple[int, int]:
    """(rows, distinct event ids) stored for the project: equal when no event landed twice."""
    rows, ids = client.query(
        "SELECT count(), uniqExact(event_id) FROM events WHERE project_id = {p:UInt64}",
        parameters={"p": project_id},
    ).result_rows[0]
    return int(rows), int(ids)


def main(project_ids: list[int]) -> None:
    """Print, as JSON, every project's differences and stored events (the end-to-end test runs this after the
    server stopped, on the warehouse it left)."""
    from stacklens.settings import get_settings
    from stacklens.warehouse.client import get_warehouse

    client = get_warehouse(get_settings())
    answer: dict[str, Any] = {
        str(p): {"differences": differences(client, p), "stored": events_stored(client, p)}
        for p in project_ids
    }
    answer["repaired_attempts"] = [
        [str(source), str(batch), int(rows)]
        for source, batch, rows in client.query(
            "SELECT source, batch_id, rows FROM event_counter_repairs ORDER BY received_at"
        ).result_rows
    ]
    print(json.dumps(answer))


if __name__ == "__main__":
    main([int(p) for p in sys.argv[1:]])
