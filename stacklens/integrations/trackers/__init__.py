"""One client per tracker behind :class:`stacklens.integrations.trackers.base.Tracker`; :func:`tracker_for`
builds the right one for a connection."""

from __future__ import annotations

from stacklens.integrations.trackers.base import Connection, Tracker
from stacklens.integrations.trackers.github import GitHub
from stacklens.integrations.trackers.gitlab import GitLab
from stacklens.integrations.trackers.jira import Jira
from stacklens.integrations.trackers.linear import Linear
from stacklens.outbound import OutboundClient

TRACKERS: dict[str, type[Tracker]] = {"github": GitHub, "gitlab": GitLab, "jira": Jira, "linear": Linear}
TRACKER_TYPES = tuple(TRACKERS)


def tracker_for(connection: Connection, outbound: OutboundClient) -> Tracker:
    return TRACKERS[connection.type](connection, outbound)
