"""The JSON answers of the analyst's workspace routes — Explore's query and saved queries, dashboards and
their share links, annotations, report subscriptions — as typed models, so the OpenAPI document shows what
each answers. The routes build their answers in the core (``as_json``) and serialise them once; these models
are the contract those dictionaries keep, checked against real answers by the routes' tests."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field


class SeriesLineOut(BaseModel):
    group: dict[str, Any] = Field(description="The group-by fields' values (empty without a group-by).")
    t: list[str] = Field(description="The buckets' starts, ISO 8601 UTC; only buckets that hold rows.")
    samples: list[int] = Field(description="Rows per bucket.")
    values: dict[str, list[Any]] = Field(description="Per aggregate column, its value in each bucket.")
    counts: dict[str, list[int]] = Field(
        description="Per aggregate over a metric, the values each figure sums up."
    )


class ExploreMetaOut(BaseModel):
    rows_read: int = Field(description="Rows the engine read from storage.")
    elapsed_ms: float
    truncated: bool = Field(description="The table (or the series) was cut at its limit.")
    compared_release: str | None = Field(
        default=None, description='With "compare": {"previous_release": true}: the release compared with.'
    )


class ExploreAnswerOut(BaseModel):
    columns: list[str]
    rows: list[dict[str, Any]] = Field(description="One object per row, keyed by the columns.")
    series: list[SeriesLineOut]
    meta: ExploreMetaOut


class SavedQueryOut(BaseModel):
    id: int
    name: str
    description: str
    owner_user_id: int | None
    query: dict[str, Any] = Field(description="The Explore query body.")
    created_at: str = Field(description="ISO 8601 UTC.")
    updated_at: str = Field(description="ISO 8601 UTC.")


class SavedQueriesOut(BaseModel):
    rows: list[SavedQueryOut]


class DashboardOut(BaseModel):
    id: int
    name: str
    description: str
    filters: dict[str, Any] = Field(
        description='The filter bar: "range", "environment", "release", "project".'
    )
    widgets: list[dict[str, Any]] = Field(
        description="The widgets, each an Explore question with its layout."
    )
    variables: list[dict[str, Any]] = Field(
        default_factory=list,
        description='The dashboard variables: each {"name", "column" or "values", "default"}; a widget filter '
        'whose value is "$name" takes the variable\'s value (docs/explore.md, "Dashboard variables").',
    )
    refresh: str | None = Field(
        default=None, description='Auto-refresh: "30s", "1m", "5m", "15m", or null for none.'
    )
    owner_user_id: int | None
    created_at: str = Field(description="ISO 8601 UTC.")
    updated_at: str = Field(description="ISO 8601 UTC.")


class DashboardsOut(BaseModel):
    rows: list[DashboardOut]


class ShareLinkOut(BaseModel):
    url: str = Field(description="/share/dashboards/{token}; the token is shown once.")
    absolute_url: str
    expires_at: str = Field(description="ISO 8601 UTC.")


class AnnotationOut(BaseModel):
    id: int
    time: str = Field(description="ISO 8601 UTC.")
    text: str
    tags: list[str]
    project: str | None = Field(description="The project's slug, or null for the whole organization.")
    release: str | None
    created_at: str = Field(description="ISO 8601 UTC.")


class AnnotationsOut(BaseModel):
    rows: list[AnnotationOut]


class ScheduleOut(BaseModel):
    every: Literal["day", "week"]
    at: str = Field(description="HH:MM in the schedule's time zone.")
    weekday: str | None = Field(description="For a weekly schedule: monday … sunday.")
    timezone: str


class SubscriptionOut(BaseModel):
    id: int
    target: dict[str, int] = Field(description='{"dashboard_id"} or {"saved_query_id"}.')
    schedule: ScheduleOut
    format: Literal["pdf", "csv", "summary"]
    channel_id: int | None
    owner_user_id: int | None
    paused: bool
    next_run_at: str | None = Field(description="ISO 8601 UTC.")
    last_run_at: str | None = Field(description="ISO 8601 UTC.")
    last_error: str | None


class SubscriptionsOut(BaseModel):
    rows: list[SubscriptionOut]
