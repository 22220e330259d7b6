"""The widget cache: an answer is served for its TTL and never after; each organization finds only the
answers of its own questions (the same question of two organizations gives each its own rows); errors are
not kept; views of a question being answered wait for that answer instead of asking again; two warehouses
in one process keep separate caches; the cells held stay under the bound."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from stacklens.control.db import session_scope
from stacklens.explore.query_parser import parse_query
from stacklens.explore.run import Result
from stacklens.explore.widget_cache import (
    TTL_SECONDS,
    KeptAnswer,
    WidgetCache,
    answer_key,
    widget_cache_for,
)
from stacklens.explore.widgets import answer_widgets
from stacklens.settings import Settings
from tests.stacklens.performance.perf_seed import NOW, migrated, seed

AT = NOW + timedelta(minutes=30)
COUNT = {"dataset": "pageloads", "aggregates": [{"fn": "count"}], "group_by": ["release"]}
BODY = {**COUNT, "since": "2026-01-01T00:00:00Z", "until": "2026-01-08T00:00:00Z"}


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _kept(rows: int = 1) -> KeptAnswer:
    result = Result(["release", "count"], [{"release": "a", "count": i} for i in range(rows)])
    return KeptAnswer(BODY, parse_query(BODY), result, None, datetime(2026, 1, 8, tzinfo=UTC))


def test_the_key_is_the_question_with_its_windows_length_not_its_end() -> None:
    later = {**BODY, "since": "2026-01-01T00:05:00Z", "until": "2026-01-08T00:05:00Z"}
    longer = {**BODY, "since": "2025-12-31T00:00:00Z"}
    assert answer_key(1, [2], "line", BODY) == answer_key(1, [2], "line", later)
    assert answer_key(1, [2], "line", BODY) != answer_key(1, [2], "line", longer)
    assert answer_key(1, [2], "line", BODY) != answer_key(2, [2], "line", BODY)  # another organization
    assert answer_key(1, [2], "line", BODY) != answer_key(1, [2, 3], "line", BODY)  # more projects
    assert answer_key(1, [2], "line", BODY) != answer_key(1, [2], "table", BODY)
    production = {**BODY, "filters": [{"field": "environment", "op": "=", "value": "production"}]}
    assert answer_key(1, [2], "line", BODY) != answer_key(1, [2], "line", production)


def test_an_answer_is_served_for_its_ttl_and_never_after() -> None:
    clock = Clock()
    cache = WidgetCache(ttl=60, clock=clock)
    key = answer_key(1, [1], "number", BODY)
    first = cache.answer(key, _kept)
    clock.now += 59.9
    assert cache.answer(key, lambda: pytest.fail("asked again within the TTL")) is first
    clock.now += 0.1
    assert cache.get(key) is None
    assert cache.answer(key, _kept) is not first


def test_an_answer_ages_from_when_its_question_was_asked() -> None:
    clock = Clock()
    cache = WidgetCache(ttl=60, clock=clock)
    key = answer_key(1, [1], "number", BODY)

    def slow() -> KeptAnswer:
        clock.now += 20  # the engine took 20 s
        return _kept()

    cache.answer(key, slow)
    clock.now += 39.9
    assert cache.get(key) is not None
    clock.now += 0.1
    assert cache.get(key) is None


def test_errors_are_not_kept() -> None:
    cache = WidgetCache(clock=Clock())
    key = answer_key(1, [1], "number", BODY)

    def busy() -> KeptAnswer:
        raise RuntimeError("busy")

    with pytest.raises(RuntimeError):
        cache.answer(key, busy)
    assert cache.get(key) is None
    assert cache.answer(key, _kept).result.rows


def test_views_of_a_question_being_answered_wait_for_its_answer() -> None:
    cache = WidgetCache()
    key = answer_key(1, [1], "number", BODY)
    calls: list[int] = []

    def slow() -> KeptAnswer:
        calls.append(1)
        time.sleep(0.2)
        return _kept()

    got: list[KeptAnswer] = []
    threads = [threading.Thread(target=lambda: got.append(cache.answer(key, slow))) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(calls) == 1 and len(got) == 4 and all(g is got[0] for g in got)


def test_the_cells_held_stay_under_the_bound() -> None:
    cache = WidgetCache(max_cells=25, clock=Clock())
    keys = [answer_key(1, [1], "table", {**BODY, "limit": n}) for n in range(3)]
    for key in keys:
        cache.put(key, _kept(rows=10))  # 11 cells each
    assert cache.get(keys[0]) is None and cache.get(keys[1]) and cache.get(keys[2])
    cache.put(keys[0], _kept(rows=30))  # larger than the whole cache: not kept
    assert cache.get(keys[0]) is None and cache.get(keys[2])


def test_each_warehouse_has_its_own_cache(tmp_path) -> None:
    one = Settings(data_dir=tmp_path / "one")
    two = Settings(data_dir=tmp_path / "two")
    assert widget_cache_for(one) is widget_cache_for(one)
    assert widget_cache_for(one) is not widget_cache_for(two)


def _counts(answer: Any) -> int:
    return sum(row["count"] for row in answer.result.rows)


def test_organizations_never_see_each_others_answers_and_new_rows_show_after_the_ttl(
    settings: Settings, make_org
) -> None:
    acme, other = make_org("Acme"), make_org("Globex")
    client = migrated(settings)
    seed(client, int(acme["org_id"]), int(acme["project_id"]), loads=60, facts=False)
    seed(client, int(other["org_id"]), int(other["project_id"]), loads=20, seed=3)
    clock = Clock()
    cache = WidgetCache(clock=clock)
    widgets = [{"kind": "table", "query": COUNT, "layout": {"x": 0, "y": 0, "w": 6, "h": 2}}]
    bar = {"range": "30d", "environment": "", "release": "", "project": ""}
    with session_scope(settings) as session:
        mine = answer_widgets(client, session, int(acme["org_id"]), widgets, bar, AT, cache)[0]
        theirs = answer_widgets(client, session, int(other["org_id"]), widgets, bar, AT, cache)[0]
        assert (_counts(mine), _counts(theirs)) == (60, 20)  # the same question, each organization's own rows
        # Rows land; within the TTL the page shows the kept answer, saying when it was taken.
        seed(client, int(acme["org_id"]), int(acme["project_id"]), loads=5, seed=11, days=1)
        clock.now += TTL_SECONDS - 1
        again = answer_widgets(
            client, session, int(acme["org_id"]), widgets, bar, AT + timedelta(seconds=50), cache
        )
        assert _counts(again[0]) == 60 and again[0].taken_at == AT
        assert (
            _counts(answer_widgets(client, session, int(other["org_id"]), widgets, bar, AT, cache)[0]) == 20
        )
        # Past the TTL the question is asked again.
        clock.now += 1
        later = AT + timedelta(seconds=61)
        fresh = answer_widgets(client, session, int(acme["org_id"]), widgets, bar, later, cache)[0]
        assert _counts(fresh) == 65 and fresh.taken_at == later


def test_a_sql_widget_rendered_again_within_the_minute_runs_no_query(
    settings: Settings, make_org, monkeypatch
) -> None:
    """A SQL panel is kept as the other widgets are (auto-refresh and TV mode within the query budgets): a
    second render within the TTL opens no connection and runs no statement; another variable value, another
    organization or the TTL's end asks again."""
    acme, other = make_org("Acme"), make_org("Globex")
    client = migrated(settings)
    seed(client, int(acme["org_id"]), int(acme["project_id"]), loads=60, facts=False)
    seed(client, int(other["org_id"]), int(other["project_id"]), loads=20, seed=3)
    asked: list[str] = []
    query = client.query

    def counted(sql: str, *args: Any, **kwargs: Any) -> Any:
        asked.append(sql)
        return query(sql, *args, **kwargs)

    monkeypatch.setattr(client, "query", counted)
    connections: list[int] = []

    def connect() -> Any:
        connections.append(1)
        return client

    sql = (
        "SELECT count() AS loads FROM pageload_facts WHERE ts >= {since:DateTime} AND ts < {until:DateTime}"
        " AND ($rel = '' OR release = $rel)"
    )
    widget = {"title": "Loads", "kind": "number", "sql": sql, "layout": {"x": 0, "y": 0, "w": 3, "h": 1}}
    clock = Clock()
    cache = WidgetCache(clock=clock)
    bar = {"range": "30d", "environment": "", "release": "", "project": ""}

    def render(org: dict[str, Any], at: datetime, rel: str = "") -> Any:
        widgets = [{**widget, "sql_variables": {"rel": rel}}]
        with session_scope(settings) as session:
            return answer_widgets(connect, session, int(org["org_id"]), widgets, bar, at, cache)[0]

    first = render(acme, AT)
    assert first.error == "" and first.number == 60 and first.taken_at == AT
    assert asked, "the first render asks the engine"
    asked.clear()
    clock.now += TTL_SECONDS - 1
    again = render(acme, AT + timedelta(seconds=50))
    assert asked == [] and connections == [1] and again.number == 60 and again.taken_at == AT
    assert render(other, AT).number == 20 and asked  # another organization's own answer
    asked.clear()
    release = str(client.query(
        "SELECT any(release) FROM pageload_facts WHERE org_id = {o:UInt64}", parameters={"o": acme["org_id"]}
    ).result_rows[0][0])  # fmt: skip
    asked.clear()
    assert 0 < render(acme, AT, release).number < 60 and asked  # another variable value
    asked.clear()
    clock.now += 1
    assert render(acme, AT + timedelta(seconds=61)).number == 60 and asked  # past the TTL


def test_a_value_kept_beside_the_answers_lasts_the_ttl_and_goes_with_clear() -> None:
    clock = Clock()
    cache = WidgetCache(clock=clock)
    asked: list[str] = []

    def compute(text: str) -> list[str]:
        asked.append(text)
        return [text]

    assert cache.kept(("markers", 1), lambda: compute("first")) == ["first"]
    clock.now += TTL_SECONDS - 1
    assert cache.kept(("markers", 1), lambda: compute("second")) == ["first"] and asked == ["first"]
    assert cache.kept(("markers", 2), lambda: compute("other")) == ["other"]  # another key, its own value
    clock.now += 1
    assert cache.kept(("markers", 1), lambda: compute("third")) == ["third"]  # a TTL old: asked again
    cache.clear()
    assert cache.kept(("markers", 1), lambda: compute("fourth")) == ["fourth"]
    assert asked == ["first", "other", "third", "fourth"]
