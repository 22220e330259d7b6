"""The release list's window, filters and sort orders (the release pages and the releases API): the filters
parsed as the performance filters are, 30 days by default, and the rows of
:func:`stacklens.releases.health.release_health` sorted by one of their figures."""

from __future__ import annotations

from datetime import datetime

from stacklens.releases.health import ReleaseHealth
from stacklens.view_filters import BadFilter, ViewFilters

# The release pages' default window: long enough to hold the release before the newest one (a verdict compares
# a release with the one before it in the same window).
DEFAULT_RANGE = "30d"
# What the release list can be sorted by (newest first by default, as Sentry lists releases).
SORTS = (
    "first_seen",
    "version",
    "adoption",
    "crash_free_sessions",
    "crash_free_users",
    "sessions",
    "users",
    "errors_per_1k_page_loads",
    "new_issues",
)


def sort_releases(
    rows: list[ReleaseHealth], sort: str = "first_seen", order: str = "desc"
) -> list[ReleaseHealth]:
    """``rows`` sorted by a field of :data:`SORTS`, ``asc`` or ``desc``; a release without the figure last."""
    if sort not in SORTS:
        raise BadFilter("sort", f"{sort!r} is not one of {', '.join(SORTS)}")
    if order not in ("asc", "desc"):
        raise BadFilter("order", "must be asc or desc")
    known = [r for r in rows if getattr(r, sort) is not None]
    missing = [r for r in rows if getattr(r, sort) is None]
    return sorted(known, key=lambda r: getattr(r, sort), reverse=order == "desc") + missing


def health_filters(
    *,
    range: str = "",
    since: str = "",
    until: str = "",
    environment: str = "",
    release: str = "",
    browser: str = "",
    now: datetime | None = None,
) -> ViewFilters:
    """The filters of the release pages and API, parsed as the performance filters are (the same window and
    messages; the range 30d when none is given); ``release`` narrows the list to one release (its verdict
    still against the one before it). :class:`BadFilter` names the field; a browser is refused: sessions
    carry none."""
    if browser:
        raise BadFilter("browser", "release health is per release and environment; sessions carry no browser")
    if not (range or since or until):
        range = DEFAULT_RANGE
    return ViewFilters.parse(
        range=range, since=since, until=until, environment=environment, release=release, now=now
    )
