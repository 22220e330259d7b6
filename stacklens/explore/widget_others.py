"""The "others" of a line or bar widget cut at its series limit (docs/explore.md, "What a widget draws"): the
question again without its group-by and with every drawn group filtered out, so the groups beyond the top N
are drawn as one line (or bar) named *others* — the same aggregates over the rest of the rows, never a sum of
percentiles. One more engine read, only for a widget whose answer was cut, kept with its answer."""

from __future__ import annotations

from dataclasses import replace

from stacklens.explore.datasets import NUMBER
from stacklens.explore.query import Filter, Query
from stacklens.explore.run import Result

OTHERS = "others"


def others_query(query: Query, result: Result) -> Query | None:
    """The question of the rows outside the drawn groups (None when nothing was cut, or the widget groups by
    more than one field or a tag: its others are named in the chart's note only)."""
    if not result.truncated or len(query.group_by) != 1 or query.group_by[0].startswith("tag:"):
        return None
    field = query.group_by[0]
    number = query.dataset.fields[field].type == NUMBER
    drawn = [row[field] for row in result.rows if row.get(field) is not None]
    if not drawn:
        return None
    outside = tuple(Filter(field, "!=", float(v) if number else str(v)) for v in drawn)
    return replace(
        query,
        group_by=(),
        filters=(*query.filters, *outside),
        order_by="samples",
        descending=True,
        limit=1,
        compare=None,
    )
