"""Stored events moved to the issue that now holds their fingerprint (a merge or a split,
:mod:`stacklens.issues.merges`): a warehouse mutation of their ``issue_id``, then every insert-time table
keyed by issue fed again from them, so every reader sees one issue. Scoped by ``org_id`` and project, as
the merges are."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from clickhouse_connect.driver.client import Client

from stacklens.warehouse.queries import fill_template, load_query, run_query

# The view's SELECT reads `events`; a regroup runs the same SELECT over the moved issues' events only.
_FROM_EVENTS = re.compile(r"\bFROM\s+(`?\w+`?\.)?`?events`?(?=[\s)]|$)")
_NAME = re.compile(r"^\w+$")


def regroup(
    client: Client, org_id: int, project_id: int, moves: dict[str, int], issue_ids: list[int]
) -> None:
    """Move the stored events of ``moves`` (fingerprint → issue) and rebuild every insert-time table keyed by
    issue for ``issue_ids`` (every issue that lost or gained events) from the stored events.

    Each table is fed by the very SELECT of its materialized view (read from the engine, so no aggregation is
    written twice), over ``events`` narrowed to the project's issues. An event landing on one of these issues
    between a table's clearing and its feed would be counted twice there (its own insert and the feed): the
    callers run this with the front door's drains held (:func:`stacklens.issues.merges.merge`).
    """
    if moves:
        fps = sorted(moves)
        client.command(
            load_query("issues/merges/regroup_events"),
            parameters={
                "org_id": org_id,
                "project_id": project_id,
                "fingerprints": fps,
                "issue_ids": [moves[f] for f in fps],
            },
        )
    regrouped = sorted({int(i) for i in issue_ids})
    scope = {"org_id": org_id, "project_id": project_id, "issue_ids": regrouped}
    # The narrowing is a named text with server-side parameters; only the view's own SELECT is spliced around
    # it.
    narrowed = " ".join(
        line for line in load_query("issues/merges/narrowed_events").splitlines() if not line.startswith("--")
    )
    for view in run_query(client, "issues/merges/fed_tables"):
        target = str(view["target"])
        if not _NAME.match(target):
            continue
        client.command(load_query("issues/merges/clear_table"), parameters={**scope, "table": target})
        feed = _FROM_EVENTS.sub(lambda _: narrowed, str(view["query"]), count=1)
        # A view's TO table takes the SELECT's columns by name; an INSERT … SELECT by position: name them.
        described = client.query(fill_template("issues/merges/feed_columns", feed=feed), parameters=scope)
        fed = {str(r[0]) for r in described.result_rows}
        table_columns = [
            str(r["name"]) for r in run_query(client, "issues/merges/columns", {"table": target})
        ]
        names = ", ".join(f"`{c}`" for c in table_columns if c in fed)
        # The table and column names are the engine's own (system tables), the view's SELECT its definition.
        feed_table = fill_template("issues/merges/feed_table", table=f"`{target}`", columns=names, feed=feed)
        client.command(feed_table, parameters=scope)
    _refresh_marts(client, org_id, project_id, regrouped)


# The marts built on schedule from the insert-time tables that keep a row per regrouped issue: each is cleared
# for those issues, then rebuilt for them at once by the asset's own statement (pipelines/assets/issues.py),
# so the release pages and the issues mart say what the list says from the merge on, not from the next tick.
# (related_issues pairs follow on the asset's next run that sees new elements of the issues.)
_MARTS = ("issues", "issue_users")


def _refresh_marts(client: Client, org_id: int, project_id: int, issue_ids: list[int]) -> None:
    scope = {"org_id": org_id, "project_id": project_id, "issue_ids": issue_ids}
    for table in _MARTS:
        client.command(load_query("issues/merges/clear_table"), parameters={**scope, "table": table})
    client.command(load_query("issues/merges/issue_user_members"), parameters=scope)
    version = datetime.now(UTC)
    client.command(
        load_query("pipelines/issues_refresh"),
        parameters={**scope, "since": version, "materialized_at": version},
    )
