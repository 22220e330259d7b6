"""A dashboard's variables (docs/explore.md, "Variables"): ``[{"name", "column" | "values", "default"}]``,
each a choice over a column's values (``page``, ``endpoint``, ``service``, ``browser``, ``tag:<key>`` …) or a
fixed list, kept in the page's URL (``var-<name>=<value>``) so a link keeps them, and used by every widget:

- a widget filter whose value is ``$name`` takes the variable's value (no filter when the variable is "all");
- any other widget whose dataset has the variable's column is filtered ``column = value`` (as the filter bar's
  environment filters every widget), and one whose dataset has no such column says it is not filtered by it.

A column variable's values are the column's most frequent values in the dashboard's window, asked as an
Explore question (the analysts' lane and query budgets, kept a minute with the widgets' answers); a column
without values in the window is "no values", and the widgets that use it say so rather than draw an empty
chart. ``refresh`` (``30s``, ``1m``, ``5m``, ``15m`` or none) is how often the page asks again."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from clickhouse_connect.driver.client import Client
from sqlalchemy.orm import Session

from stacklens.errors import InvalidInput, NotFound
from stacklens.explore.datasets import DATASETS, STRING, Dataset
from stacklens.explore.query import MAX_VALUE_LENGTH, TAG_KEY, BadQuery
from stacklens.explore.query_parser import parse_query
from stacklens.explore.run import TooManyQueries, run_explore
from stacklens.explore.scope import project_ids
from stacklens.explore.widget_cache import KeptAnswer, WidgetCache, answer_key
from stacklens.explore.widgets import question
from stacklens.view_filters import RANGES

NAME = re.compile(r"[a-z][a-z0-9_]{0,30}")
VARIABLE_KEYS = ("name", "column", "values", "default")
MAX_VARIABLES = 8
MAX_VALUES = 100  # a fixed list's values, and the most frequent values a column variable offers
REFRESHES: dict[str, int] = {"30s": 30, "1m": 60, "5m": 300, "15m": 900}
PARAM = "var-"  # the URL's key of a variable's value: var-page=/checkout
# Where a column's values are listed when no widget of the dashboard reads a dataset with it.
HOMES = {"page": "pageloads", "endpoint": "api_calls", "service": "errors", "browser": "pageloads"}
# Every string field of a dataset can be a variable's column (and tag:<key>).
COLUMNS = tuple(dict.fromkeys(k for d in DATASETS.values() for k, f in d.fields.items() if f.type == STRING))


@dataclass(frozen=True)
class Variable:
    name: str
    column: str  # '' for a fixed list
    values: tuple[str, ...]  # a fixed list's values ('' for a column variable: asked in the window)
    default: str  # '' = all values

    @property
    def label(self) -> str:
        return f"${self.name}"


def _text(where: str, value: object) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise BadQuery(where, "must be a string")
    value = value.strip()
    if len(value) > MAX_VALUE_LENGTH:
        raise BadQuery(where, f"at most {MAX_VALUE_LENGTH} characters")
    if any(ord(ch) < 32 for ch in value):
        raise BadQuery(where, "control characters are not allowed")
    return value


def _one(index: int, raw: object, seen: set[str]) -> dict[str, Any]:
    where = f"variables[{index}]"
    if not isinstance(raw, dict):
        raise BadQuery(where, 'must be an object {"name", "column" | "values", "default"}')
    unknown = [k for k in raw if k not in VARIABLE_KEYS]
    if unknown:
        raise BadQuery(f"{where}.{str(unknown[0])[:64]}", f"unknown key; use {', '.join(VARIABLE_KEYS)}")
    name = _text(f"{where}.name", raw.get("name")).removeprefix("$")
    if not NAME.fullmatch(name):
        raise BadQuery(f"{where}.name", "a lower-case letter, then letters, digits or _ (at most 31)")
    if name in seen:
        raise BadQuery(f"{where}.name", f"${name} is defined twice")
    seen.add(name)
    column = _text(f"{where}.column", raw.get("column"))
    values = raw.get("values")
    if bool(column) == (values is not None):
        raise BadQuery(where, "give exactly one of column, values")
    out: dict[str, Any] = {"name": name}
    if column:
        tag = column.startswith("tag:") and TAG_KEY.fullmatch(column[4:])
        if not tag and column not in COLUMNS:
            raise BadQuery(f"{where}.column", f"unknown column {column!r}; use one of {', '.join(COLUMNS)}")
        out["column"] = column
    else:
        if not isinstance(values, list) or not values or len(values) > MAX_VALUES:
            raise BadQuery(f"{where}.values", f"must be a list of 1 to {MAX_VALUES} strings")
        out["values"] = list(dict.fromkeys(_text(f"{where}.values", v) for v in values))
    out["default"] = _text(f"{where}.default", raw.get("default"))
    if "values" in out and out["default"] and out["default"] not in out["values"]:
        raise BadQuery(f"{where}.default", f"{out['default']!r} is not one of its values")
    return out


def parse_variables(raw: object) -> list[dict[str, Any]]:
    """The dashboard's variables, normalised; :class:`BadQuery` naming the field at fault."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise BadQuery("variables", 'must be a list of {"name", "column" | "values", "default"}')
    if len(raw) > MAX_VARIABLES:
        raise BadQuery("variables", f"a dashboard has at most {MAX_VARIABLES} variables")
    seen: set[str] = set()
    return [_one(i, v, seen) for i, v in enumerate(raw)]


def parse_refresh(raw: object) -> str | None:
    if raw in (None, "", "off"):
        return None
    if raw not in REFRESHES:
        raise BadQuery("refresh", f"{str(raw)[:32]!r} is not one of {', '.join(REFRESHES)} (or null)")
    return str(raw)


def variables_of(raw: list[dict[str, Any]]) -> list[Variable]:
    return [
        Variable(v["name"], v.get("column", ""), tuple(v.get("values") or ()), v.get("default", ""))
        for v in raw
    ]


def references(body: dict[str, Any]) -> set[str]:
    """The variable names a question's filters use (``$page``)."""
    found = set()
    for f in body.get("filters") or []:
        items = f.get("value") if isinstance(f.get("value"), list) else [f.get("value")]
        found |= {str(v)[1:] for v in items if isinstance(v, str) and v.startswith("$")}
    return found


def check_references(widgets: list[dict[str, Any]], variables: list[dict[str, Any]]) -> None:
    """Every ``$name`` an inline widget question uses is a variable of the dashboard."""
    names = {v["name"] for v in variables}
    for i, widget in enumerate(widgets):
        missing = sorted(references(widget.get("query") or {}) - names)
        if missing:
            raise BadQuery(f"widgets[{i}].query.filters", f"no variable ${missing[0]} on this dashboard")


def chosen_values(variables: list[Variable], params: Mapping[str, str]) -> dict[str, str]:
    """Each variable's value: the URL's ``var-<name>`` when given, else its default ('' = all)."""
    out = {}
    for v in variables:
        value = _text(f"{PARAM}{v.name}", params.get(PARAM + v.name, v.default))
        if v.values and value and value not in v.values:
            raise BadQuery(f"{PARAM}{v.name}", f"{value!r} is not one of {', '.join(v.values)}")
        out[v.name] = value
    return out


def with_defaults(raw: list[dict[str, Any]], chosen: Mapping[str, str]) -> list[dict[str, Any]]:
    """The dashboard's variables with ``chosen`` values as their defaults ("Keep these filters": what the
    page opens with, and what its reports use); a variable not in ``chosen`` keeps its own."""
    return [{**v, "default": chosen[v["name"]]} if v["name"] in chosen else dict(v) for v in raw]


def apply_variables(
    body: dict[str, Any], variables: list[Variable], chosen: dict[str, str]
) -> tuple[dict[str, Any], list[str], list[str]]:
    """``(body, used, unfiltered)``: the question with the variables' values in its filters, the variables it
    uses (by reference, or by column when set to a value), and the column variables its dataset has no field
    for (it is not filtered by them)."""
    dataset = DATASETS.get(str(body.get("dataset") or ""))
    named = references(body)
    used: list[str] = []
    unfiltered: list[str] = []
    filters = []
    for f in body.get("filters") or []:
        items = f.get("value") if isinstance(f.get("value"), list) else [f.get("value")]
        if not any(isinstance(v, str) and v[1:] in chosen and v.startswith("$") for v in items):
            filters.append(f)
            continue
        values = [chosen.get(v[1:], v) if isinstance(v, str) and v.startswith("$") else v for v in items]
        values = [v for v in values if v != ""]  # a variable set to "all" filters nothing
        if values:
            filters.append({**f, "value": values if isinstance(f.get("value"), list) else values[0]})
    for v in variables:
        if v.name in named:
            used.append(v.name)
        elif v.column and dataset is not None:
            if v.column.startswith("tag:") or v.column in dataset.fields:
                if chosen.get(v.name):  # used when it filters; "all" leaves the widget as it is
                    used.append(v.name)
                    filters.append({"field": v.column, "op": "=", "value": chosen[v.name]})
            else:
                unfiltered.append(v.name)
    return {**body, "filters": filters}, used, unfiltered


def with_variables(
    session: Session,
    org_id: int,
    widgets: list[dict[str, Any]],
    variables: list[Variable],
    chosen: dict[str, str],
) -> list[dict[str, Any]]:
    """Each widget with its question's variables applied (an inline ``query`` that replaces its source's, the
    source kept for its label and links), ``variables_used`` and ``variables_unfiltered`` named."""
    if not variables:
        return widgets
    out = []
    for widget in widgets:
        if "sql" in widget:  # a SQL panel binds $name as a parameter (stacklens.explore.sql_panel)
            out.append({**widget, "sql_variables": dict(chosen)})
            continue
        if "query" not in widget and "saved_query_id" not in widget and "view" not in widget:
            out.append(widget)
            continue
        try:
            body = question(session, org_id, widget)
        except NotFound:
            out.append(widget)  # answered as deleted, as before
            continue
        applied, used, unfiltered = apply_variables(body, variables, chosen)
        out.append({**widget, "query": applied, "variables_used": used, "variables_unfiltered": unfiltered})
    return out


def empty_variables(variables: list[Variable], options: dict[str, list[str]]) -> set[str]:
    """The column variables without a value in the window (:func:`variable_options` answered none)."""
    return {v.name for v in variables if v.column and not options.get(v.name)}


def no_values(widget: dict[str, Any], empty: set[str]) -> str:
    """What a widget that uses a variable without values says instead of its chart, on the page, in the
    share and in the reports ('' when it uses none): drawn, it would show every value, not the variable's."""
    lacking = [n for n in widget.get("variables_used") or [] if n in empty]
    if not lacking:
        return ""
    return ", ".join(f"${n}" for n in lacking) + " has no values in this window: nothing to show for it."


def _dataset_for(variable: Variable, widgets: list[dict[str, Any]]) -> Dataset | None:
    for widget in widgets:
        dataset = DATASETS.get(str((widget.get("query") or {}).get("dataset") or ""))
        if dataset is not None and (variable.column.startswith("tag:") or variable.column in dataset.fields):
            return dataset
    home = HOMES.get(variable.column) or ("errors" if variable.column.startswith("tag:") else "")
    if home:
        return DATASETS[home]
    return next((d for d in DATASETS.values() if variable.column in d.fields), None)


def variable_options(
    client: Client | Callable[[], Client],
    session: Session,
    org_id: int,
    variables: list[Variable],
    widgets: list[dict[str, Any]],
    filters: dict[str, str],
    now: datetime | None = None,
    cache: WidgetCache | None = None,
) -> dict[str, list[str]]:
    """Each variable's values to choose from: a fixed list's own, a column's most frequent values in the
    dashboard's window and project (at most :data:`MAX_VALUES`; [] is "no values")."""
    now = (now or datetime.now(UTC)).astimezone(UTC).replace(second=0, microsecond=0)
    out: dict[str, list[str]] = {}
    for v in variables:
        if not v.column:
            out[v.name] = list(v.values)
            continue
        dataset = _dataset_for(v, widgets)
        if dataset is None:
            out[v.name] = []
            continue
        since = now - RANGES[filters.get("range") or "30d"]
        body: dict[str, Any] = {
            "dataset": dataset.key,
            "project": filters.get("project", ""),
            "since": since.isoformat().replace("+00:00", "Z"),
            "until": now.isoformat().replace("+00:00", "Z"),
            "filters": [
                {"field": k, "op": "=", "value": filters[k]}
                for k in ("environment", "release")
                if filters.get(k) and k in dataset.fields
            ],
            "group_by": [v.column],
            "aggregates": [{"fn": "count"}],
            "order_by": "-count",
            "limit": MAX_VALUES,
        }
        try:
            query = parse_query(body)
            ids = project_ids(session, org_id, query.project)

            def compute(query: Any = query, body: dict[str, Any] = body, ids: list[int] = ids) -> KeptAnswer:
                engine = client() if callable(client) else client
                result = run_explore(engine, query, org_id, ids, series=False)
                return KeptAnswer(body, query, result, None, now)

            key = answer_key(org_id, ids, "variable", body)
            kept = compute() if cache is None else cache.answer(key, compute)
            column = query.group_by[0]
            out[v.name] = [str(r[column]) for r in kept.result.rows if str(r[column] or "")]
        except (InvalidInput, NotFound, TooManyQueries):
            out[v.name] = []
    return out
