"""The workspace routes answer exactly the shapes their OpenAPI models declare: every key of a real answer is
a field of its model and every required field is there, for Explore's query and saved queries, dashboards and
their share links, annotations and subscriptions."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient
from pydantic import BaseModel

from api.routers.workspace_answers import (
    AnnotationOut,
    AnnotationsOut,
    DashboardOut,
    DashboardsOut,
    ExploreAnswerOut,
    ExploreMetaOut,
    SavedQueriesOut,
    SavedQueryOut,
    ShareLinkOut,
    SubscriptionOut,
    SubscriptionsOut,
)


def _matches(model: type[BaseModel], answer: Any) -> None:
    """``answer`` validates against ``model`` and holds no key the model does not declare (at every level)."""
    model.model_validate(answer)
    assert set(answer) <= set(model.model_fields), (model.__name__, set(answer) - set(model.model_fields))
    for name, field in model.model_fields.items():
        inner = field.annotation
        if isinstance(inner, type) and issubclass(inner, BaseModel) and isinstance(answer.get(name), dict):
            _matches(inner, answer[name])


def test_every_workspace_answer_has_its_models_shape(client: TestClient, org_factory) -> None:
    org = org_factory("Shapes")
    auth = {"Authorization": f"Bearer {org['api_key']}"}
    query = {"dataset": "errors", "project": org["project"], "range": "7d", "aggregates": [{"fn": "count"}]}

    answer = client.post("/api/explore/query", json={**query, "interval": "1d"}, headers=auth)
    assert answer.status_code == 200, answer.text
    _matches(ExploreAnswerOut, answer.json())
    _matches(ExploreMetaOut, answer.json()["meta"])

    saved = client.post("/api/explore/queries", json={"name": "Errors", "query": query}, headers=auth)
    assert saved.status_code == 201, saved.text
    _matches(SavedQueryOut, saved.json())
    _matches(SavedQueriesOut, client.get("/api/explore/queries", headers=auth).json())
    for row in client.get("/api/explore/queries", headers=auth).json()["rows"]:
        _matches(SavedQueryOut, row)

    board = client.post("/api/dashboards", json={"name": "Errors"}, headers=auth)
    assert board.status_code == 201, board.text
    _matches(DashboardOut, board.json())
    listed = client.get("/api/dashboards", headers=auth).json()
    _matches(DashboardsOut, listed)
    share = client.post(f"/api/dashboards/{board.json()['id']}/share", json={}, headers=auth)
    assert share.status_code == 201, share.text
    _matches(ShareLinkOut, share.json())

    note = client.post(
        "/api/annotations", json={"time": "2026-11-20T10:00:00Z", "text": "deploy"}, headers=auth
    )
    assert note.status_code == 201, note.text
    _matches(AnnotationOut, note.json())
    _matches(AnnotationsOut, client.get("/api/annotations", headers=auth).json())

    channel = client.post(
        "/api/alerts/channels", json={"type": "email", "name": "team", "to": ["t@shapes.test"]}, headers=auth
    )
    subscription = client.post(
        "/api/subscriptions",
        json={
            "target": {"dashboard_id": board.json()["id"]},
            "schedule": {"every": "week", "at": "09:00", "weekday": "monday", "timezone": "UTC"},
            "format": "pdf",
            "channel_id": channel.json()["id"],
        },
        headers=auth,
    )
    assert subscription.status_code == 201, subscription.text
    _matches(SubscriptionOut, subscription.json())
    _matches(SubscriptionsOut, client.get("/api/subscriptions", headers=auth).json())
