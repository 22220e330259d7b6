"""The JSON answers of the release health routes as typed models (the OpenAPI document shows them): a
release's row is :class:`stacklens.releases.health.ReleaseHealth`'s fields with its verdict, derived from the
dataclass so the two cannot drift apart."""

from __future__ import annotations

import dataclasses
from datetime import datetime
from typing import Any, get_type_hints

from pydantic import BaseModel, Field, create_model

from stacklens.releases.health import ReleaseHealth


class ComparisonOut(BaseModel):
    metric: str
    label: str
    current: float | None
    previous: float | None
    current_samples: int
    previous_samples: int
    change: float | None = Field(
        description="Percentage points for shares, percent of the previous value else."
    )
    change_unit: str = Field(description='"points" or "%".')
    p_value: float | None
    outcome: str
    reason: str


class VerdictOut(BaseModel):
    regression: bool
    reasons: list[str]
    previous_release: str
    comparisons: list[ComparisonOut]


def _release_fields() -> dict[str, Any]:
    hints = get_type_hints(ReleaseHealth)
    fields: dict[str, Any] = {}
    for field in dataclasses.fields(ReleaseHealth):
        if field.name == "verdict":
            fields["verdict"] = (VerdictOut, ...)
        else:
            kind = hints[field.name]
            # Times are answered as ISO 8601 text (stacklens.json_values.plain).
            fields[field.name] = (str | None if kind in (datetime, datetime | None) else kind, ...)
    return fields


ReleaseOut: type[BaseModel] = create_model("ReleaseOut", **_release_fields())


class ReleasesOut(BaseModel):
    rows: list[ReleaseOut]  # type: ignore[valid-type]
    filters: dict[str, Any]


class ReleaseDetailOut(ReleaseOut):  # type: ignore[valid-type,misc]
    filters: dict[str, Any]
