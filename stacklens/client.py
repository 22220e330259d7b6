"""A small client of a running StackLens server for scripts and notebooks (base install: httpx only).

    from stacklens.client import StackLens
    sl = StackLens("http://127.0.0.1:8000", "stacklens_api_…")
    df = sl.explore("pageloads", group_by=["release"], aggregates=["count", "p75:lcp_ms"], range="30d")

``explore`` downloads the result as Parquet and reads it with polars (installed with the server extra, or
``pip install polars``); ``query`` answers the JSON of ``POST /api/explore/query`` without polars. Both
work while ``stacklens serve`` owns the embedded warehouse: they ask the server, never open the warehouse."""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Required, TypedDict

import httpx

from stacklens.explore.answer import ExploreAnswer

if TYPE_CHECKING:
    import polars as pl


class ExploreFilter(TypedDict):
    field: str
    op: str
    value: Any  # the JSON value the operator takes: text, a number, or a list for "in"


class ExploreAggregate(TypedDict, total=False):
    fn: Required[str]
    metric: str  # the metric it summarises (none for "count")


FilterSpec = ExploreFilter | tuple[str, str, Any]
AggregateSpec = ExploreAggregate | str


class QueryBody(TypedDict, total=False):
    """The JSON body of ``POST /api/explore/query``; the window and the rest only when given."""

    dataset: Required[str]
    project: Required[str]
    filters: Required[list[ExploreFilter]]
    group_by: Required[list[str]]
    aggregates: Required[list[ExploreAggregate]]
    interval: str
    range: str
    since: str
    until: str
    order_by: str
    limit: int


class StackLensError(Exception):
    """The server refused the request; the message is its error and detail (the field it names)."""


def query_body(
    dataset: str,
    *,
    project: str = "",
    filters: Sequence[FilterSpec] = (),
    group_by: Sequence[str] = (),
    aggregates: Sequence[AggregateSpec] = (),
    interval: str = "",
    range: str = "",
    since: str = "",
    until: str = "",
    order_by: str = "",
    limit: int | None = None,
) -> QueryBody:
    """The JSON body of an Explore query. A filter is ``{"field", "op", "value"}`` or ``(field, op, value)``;
    an aggregate ``{"fn", "metric"}`` or ``"fn:metric"`` (``"count"``, ``"p75:lcp_ms"``)."""
    body: QueryBody = {
        "dataset": dataset,
        "project": project,
        "filters": [
            f if isinstance(f, dict) else {"field": f[0], "op": f[1], "value": f[2]} for f in filters
        ],
        "group_by": list(group_by),
        "aggregates": [a if isinstance(a, dict) else _aggregate(a) for a in aggregates],
    }
    if interval:
        body["interval"] = interval
    if range:
        body["range"] = range
    if since:
        body["since"] = since
    if until:
        body["until"] = until
    if order_by:
        body["order_by"] = order_by
    if limit is not None:
        body["limit"] = limit
    return body


def _aggregate(text: str) -> ExploreAggregate:
    """``"p75:lcp_ms"`` → ``{"fn": "p75", "metric": "lcp_ms"}``; ``"count"`` → ``{"fn": "count"}``."""
    fn, colon, metric = text.partition(":")
    return {"fn": fn, "metric": metric} if colon else {"fn": fn}


class StackLens:
    def __init__(
        self, url: str, api_key: str, *, timeout: float = 120.0, client: httpx.Client | None = None
    ) -> None:
        self.url = url.rstrip("/")
        self._client = client or httpx.Client(timeout=timeout)
        self._headers = {"Authorization": f"Bearer {api_key}"}

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> StackLens:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _post(self, body: QueryBody, fmt: str = "") -> httpx.Response:
        params = {"format": fmt} if fmt else {}
        try:
            response = self._client.post(
                f"{self.url}/api/explore/query", json=body, params=params, headers=self._headers
            )
        except httpx.HTTPError as exc:
            raise StackLensError(f"cannot reach the StackLens server at {self.url}: {exc}") from None
        if response.status_code >= 400:
            try:
                data = response.json()
                message = f"{data.get('error', response.status_code)}: {data.get('detail', '')}"
            except ValueError:
                message = f"HTTP {response.status_code}"
            raise StackLensError(message)
        return response

    def query(self, dataset: str, **spec: Any) -> ExploreAnswer:
        """``{"columns", "rows", "series", "meta"}`` of the query (at most 10,000 rows)."""
        answer: ExploreAnswer = self._post(query_body(dataset, **spec)).json()
        return answer

    def download(self, dataset: str, fmt: str = "parquet", **spec: Any) -> bytes:
        """The full result (up to 1,000,000 rows) as a ``csv``, ``parquet`` or ``json`` file's bytes."""
        return self._post(query_body(dataset, **spec), fmt).content

    def explore(self, dataset: str, **spec: Any) -> pl.DataFrame:
        """The full result as a polars DataFrame (Parquet over HTTP)."""
        try:
            import polars as pl
        except ImportError:
            raise StackLensError(
                "StackLens.explore returns a polars DataFrame: `pip install polars` (or use .query for JSON)"
            ) from None
        return pl.read_parquet(io.BytesIO(self.download(dataset, "parquet", **spec)))
