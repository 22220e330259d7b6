"""An Explore query parsed and validated from the JSON body of ``POST /api/explore/query`` (and the page's
query string) into its typed spec (:class:`stacklens.explore.query.Query`): every name is checked against the
dataset and the metric catalog, every value against its field's type, and a bad one raises
:class:`~stacklens.explore.query.BadQuery` naming the field, function or value."""

from __future__ import annotations

from typing import Any

from stacklens.explore.datasets import DATASETS, NUMBER, Dataset
from stacklens.explore.query import (
    DEFAULT_LIMIT,
    DOWNLOAD_LIMIT,
    EARLIEST,
    FNS,
    INTERVALS,
    KNOWN_KEYS,
    LATEST,
    MAX_AGGREGATES,
    MAX_BUCKETS,
    MAX_FILTERS,
    MAX_GROUP_BY,
    MAX_IN_VALUES,
    MAX_LIMIT,
    MAX_VALUE_LENGTH,
    NUMBER_OPS,
    OPS,
    STRING_OPS,
    TAG_KEY,
    VALUE_FNS,
    Aggregate,
    BadQuery,
    Compare,
    Filter,
    Query,
    release_filter,
)
from stacklens.metrics.catalog import find
from stacklens.view_filters import BadFilter, ViewFilters


def _text(name: str, value: object) -> str:
    if not isinstance(value, str):
        raise BadQuery(name, "must be a string")
    if len(value) > MAX_VALUE_LENGTH:
        raise BadQuery(name, f"at most {MAX_VALUE_LENGTH} characters")
    if any(ord(ch) < 32 for ch in value):
        raise BadQuery(name, "control characters are not allowed")
    return value


def _list(name: str, value: object, most: int) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise BadQuery(name, "must be a list")
    if len(value) > most:
        raise BadQuery(name, f"at most {most} entries")
    return value


def field_type(dataset: Dataset, name: str, where: str) -> str:
    """The type of a field or ``tag:<key>`` of the dataset; :class:`BadQuery` naming it when unknown."""
    if name.startswith("tag:"):
        if not TAG_KEY.fullmatch(name[4:]):
            raise BadQuery(where, f"{name!r} is not a tag key (letters, digits, _ . : -; at most 64)")
        return "string"
    found = dataset.fields.get(name)
    if found is None:
        raise BadQuery(
            where,
            f"unknown field {name!r} of dataset {dataset.key}; use one of {', '.join(dataset.fields)} or tag:<key>",
        )
    return found.type


def _value(name: str, kind: str, value: object) -> str | float:
    if kind == NUMBER:
        if isinstance(value, bool) or not isinstance(value, int | float | str):
            raise BadQuery(name, f"{value!r} is not a number")
        try:
            number = float(value)
        except ValueError:
            raise BadQuery(name, f"{value!r} is not a number") from None
        if number != number or number in (float("inf"), float("-inf")):
            raise BadQuery(name, f"{value!r} is not a finite number")
        return number
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return _text(name, value)


def _filter(dataset: Dataset, index: int, raw: object) -> Filter:
    where = f"filters[{index}]"
    if not isinstance(raw, dict):
        raise BadQuery(where, 'must be an object {"field", "op", "value"}')
    extra = set(raw) - {"field", "op", "value"}
    if extra:
        raise BadQuery(where, f"unknown key {sorted(extra)[0]!r}")
    name = _text(f"{where}.field", raw.get("field", ""))
    kind = field_type(dataset, name, f"{where}.field")
    op = raw.get("op", "=")
    if op not in OPS:
        raise BadQuery(f"{where}.op", f"unknown operator {op!r}; use one of {', '.join(OPS)}")
    allowed = NUMBER_OPS if kind == NUMBER else STRING_OPS
    if op not in allowed:
        raise BadQuery(f"{where}.op", f"{op!r} does not apply to the {kind} field {name!r}")
    value = raw.get("value")
    if op == "in":
        items = _list(f"{where}.value", value, MAX_IN_VALUES)
        if not items:
            raise BadQuery(f"{where}.value", "`in` needs a non-empty list")
        parsed = [_value(f"{where}.value", kind, item) for item in items]
        return Filter(name, op, tuple(parsed))  # type: ignore[arg-type]  # all str or all float: one field kind
    return Filter(name, op, _value(f"{where}.value", kind, value))


def offered_aggregates(dataset: Dataset) -> list[tuple[str, str]]:
    """Every (fn, metric) the query accepts for ``dataset`` ('' for a function of no metric), in :data:`FNS`
    order: what Explore's aggregate menu offers. Judged by the parser itself, so the page never offers one the
    server then refuses (``p75(page_loads)``, ``rate_per_1k`` on page loads)."""
    offered = []
    for fn in FNS:
        for metric in ("", *sorted({*dataset.metrics, dataset.counted})):
            try:
                parsed = _aggregate(dataset, 0, {"fn": fn, "metric": metric})
            except BadQuery:
                continue
            # A metric the function ignores (unique_users, rate_per_1k) is offered once, without the metric.
            if metric and not parsed.metric and (fn, "") in offered:
                continue
            offered.append((fn, metric))
    return offered


def _aggregate(dataset: Dataset, index: int, raw: object) -> Aggregate:
    where = f"aggregates[{index}]"
    if not isinstance(raw, dict):
        raise BadQuery(where, 'must be an object {"fn", "metric"}')
    extra = set(raw) - {"fn", "metric"}
    if extra:
        raise BadQuery(where, f"unknown key {sorted(extra)[0]!r}")
    fn = raw.get("fn")
    if fn not in FNS:
        raise BadQuery(f"{where}.fn", f"unknown function {fn!r}; use one of {', '.join(FNS)}")
    name = _text(f"{where}.metric", raw.get("metric") or "")
    if not name:
        if fn in VALUE_FNS:
            raise BadQuery(
                f"{where}.metric", f"{fn} needs a metric of {dataset.key}: {', '.join(dataset.metrics)}"
            )
        if fn == "rate_per_1k" and dataset.key != "errors":
            raise BadQuery(f"{where}.fn", "rate_per_1k (per 1,000 page loads) applies to the errors dataset")
        return Aggregate(fn, "")
    metric = find(name)
    if metric is None or (metric.key not in dataset.metrics and metric.key != dataset.counted):
        choices = ", ".join(dict.fromkeys((*dataset.metrics, dataset.counted)))
        raise BadQuery(
            f"{where}.metric", f"unknown metric {name!r} for dataset {dataset.key}; use one of {choices}"
        )
    counted = metric.key == dataset.counted and metric.key not in dataset.metrics
    if counted and fn in VALUE_FNS:
        # The dataset's rows themselves (error events, API calls): counted, they hold no value to average.
        raise BadQuery(f"{where}.fn", f"{metric.key} counts the {dataset.key} rows: use count, not {fn!r}")
    if (counted or metric.fixed_statistic) and fn not in metric.statistics and fn != "count":
        raise BadQuery(f"{where}.fn", f"{metric.key} allows {', '.join(metric.statistics)}, not {fn!r}")
    if fn == "rate_per_1k" and dataset.key != "errors":
        raise BadQuery(f"{where}.fn", "rate_per_1k (per 1,000 page loads) applies to the errors dataset")
    if fn == "unique_users":
        return Aggregate(fn, "")
    return Aggregate(fn, "" if counted or fn == "rate_per_1k" else metric.key)


def _compare(raw: object, window: ViewFilters, filters: tuple[Filter, ...] = ()) -> Compare | None:
    """The compared window of ``{"previous_period": true}``, ``{"since", "until"}`` or
    ``{"previous_release": true}``; None without one."""
    if raw is None or raw is False or raw == {}:
        return None
    if not isinstance(raw, dict):
        raise BadQuery(
            "compare", 'must be {"previous_period": true}, {"previous_release": true} or {"since", "until"}'
        )
    unknown = [k for k in raw if k not in ("previous_period", "previous_release", "since", "until")]
    if unknown:
        raise BadQuery(
            f"compare.{str(unknown[0])[:64]}",
            "unknown key; use previous_period, previous_release or since/until",
        )
    if "previous_release" in raw:
        if not isinstance(raw["previous_release"], bool):
            raise BadQuery("compare.previous_release", "must be true or false")
        if raw["previous_release"]:
            if len(raw) > 1:
                raise BadQuery(
                    "compare", "give previous_release alone: it compares over the query's own window"
                )
            if release_filter(filters) is None:
                raise BadQuery(
                    "compare.previous_release",
                    'needs exactly one filter {"field": "release", "op": "=", "value": <version>}: the release '
                    "compared with the one first seen before it",
                )
            return Compare(False, window.since, window.until, previous_release=True)
        raw = {k: v for k, v in raw.items() if k != "previous_release"}
        if not raw:
            return None
    previous = raw.get("previous_period", False)
    if not isinstance(previous, bool):
        raise BadQuery("compare.previous_period", "must be true or false")
    if previous:
        if "since" in raw or "until" in raw:
            raise BadQuery("compare", "give previous_period or since/until, not both")
        span = window.until - window.since
        return Compare(True, window.since - span, window.since)
    if not isinstance(raw.get("since"), str) or not isinstance(raw.get("until"), str):
        raise BadQuery("compare", 'give {"previous_period": true} or both since and until (ISO 8601)')
    try:
        other = ViewFilters.parse(since=raw["since"], until=raw["until"])
    except BadFilter as exc:
        raise BadQuery(f"compare.{exc.field}", str(exc).split(": ", 1)[1]) from None
    if not (other.since >= EARLIEST and other.until <= LATEST):
        raise BadQuery("compare.since", "the window must lie between 1970 and 2200")
    return Compare(False, other.since, other.until)


def parse_query(body: object, *, download: bool = False) -> Query:
    """Validate a query body; :class:`BadQuery` names the first bad field. ``download`` lifts the row limit to
    :data:`DOWNLOAD_LIMIT` (a file streams; a JSON answer stays small)."""
    if not isinstance(body, dict):
        raise BadQuery("body", "must be a JSON object")
    unknown = [key for key in body if key not in KNOWN_KEYS]
    if unknown:
        raise BadQuery(str(unknown[0])[:64], f"unknown field; the body takes {', '.join(KNOWN_KEYS)}")
    name = body.get("dataset")
    dataset = DATASETS.get(name) if isinstance(name, str) else None
    if dataset is None:
        raise BadQuery("dataset", f"unknown dataset {name!r}; use one of {', '.join(DATASETS)}")
    project = _text("project", body.get("project") or "")
    window = ViewFilters.parse(
        range=_text("range", body.get("range") or ""),
        since=_text("since", body.get("since") or ""),
        until=_text("until", body.get("until") or ""),
    )
    # The engine's DateTime64 holds 1900-2299; a window outside the data's years reads nothing anyway.
    if not (window.since >= EARLIEST and window.until <= LATEST):
        raise BadQuery("since", "the window must lie between 1970 and 2200")
    filters = tuple(
        _filter(dataset, i, f) for i, f in enumerate(_list("filters", body.get("filters"), MAX_FILTERS))
    )
    group_by: list[str] = []
    for i, raw in enumerate(_list("group_by", body.get("group_by"), MAX_GROUP_BY)):
        field_type(dataset, _text(f"group_by[{i}]", raw), f"group_by[{i}]")
        if raw in group_by:
            raise BadQuery(f"group_by[{i}]", f"{raw!r} is already grouped by")
        group_by.append(raw)
    raw_aggregates = _list("aggregates", body.get("aggregates"), MAX_AGGREGATES) or [{"fn": "count"}]
    aggregates: list[Aggregate] = []
    for i, raw in enumerate(raw_aggregates):
        aggregate = _aggregate(dataset, i, raw)
        if aggregate.column in (a.column for a in aggregates) or aggregate.column in group_by:
            raise BadQuery(f"aggregates[{i}]", f"{aggregate.column!r} is asked for twice")
        aggregates.append(aggregate)
    interval = _text("interval", body.get("interval") or "")
    if interval:
        if interval not in INTERVALS:
            raise BadQuery("interval", f"unknown interval {interval!r}; use one of {', '.join(INTERVALS)}")
        if (window.until - window.since) / INTERVALS[interval] > MAX_BUCKETS:
            raise BadQuery("interval", f"the window holds more than {MAX_BUCKETS:,} buckets of {interval}")
    columns = [*group_by, *(a.column for a in aggregates), "samples"]
    order = _text("order_by", body.get("order_by") or "")
    descending = order.startswith("-") or not order
    order_by = order.lstrip("-") or aggregates[0].column
    if order_by not in columns:
        raise BadQuery(
            "order_by", f"unknown column {order_by!r}; use one of {', '.join(columns)} (- for descending)"
        )
    compare = _compare(body.get("compare"), window, filters)
    if compare is not None and download:
        raise BadQuery(
            "compare", "a download holds one window's rows; the JSON answer carries the comparison"
        )
    most = DOWNLOAD_LIMIT if download else MAX_LIMIT
    limit = body.get("limit", DEFAULT_LIMIT if not download else DOWNLOAD_LIMIT)
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= most:
        raise BadQuery("limit", f"must be a whole number from 1 to {most:,}")
    return Query(
        dataset,
        project,
        window,
        filters,
        tuple(group_by),
        tuple(aggregates),
        interval,
        order_by,
        descending,
        limit,
        compare,
    )
