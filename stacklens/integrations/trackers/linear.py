"""Linear (GraphQL at ``https://api.linear.app/graphql``, a personal API key sent as ``Authorization: <key>``).

A target is a team key (``ENG``); creating resolves it to the team's id first (``issueCreate`` takes a
``teamId``). A ticket is closed when its workflow state's type is ``completed`` or ``canceled``.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from stacklens.integrations.document import Document, to_markdown
from stacklens.integrations.trackers.base import (
    Account,
    Ticket,
    Tracker,
    TrackerError,
    TrackerRefused,
    TrackerUnavailable,
    strip_base,
)
from stacklens.outbound import OutboundResponse

PUBLIC = "https://api.linear.app"
TEAM_RE = re.compile(r"^[A-Za-z0-9]{1,10}$")
KEY_RE = re.compile(r"^([A-Za-z0-9]{1,10})-(\d+)$")
ISSUE_FIELDS = "id identifier url state { type } team { key }"

VIEWER_QUERY = "query StackLensViewer { viewer { name email } teams(first: 100) { nodes { id key name } } }"
TEAMS_QUERY = (
    "query StackLensTeam($key: String!) { teams(filter: { key: { eq: $key } }) { nodes { id key } } }"
)
CREATE_MUTATION = (
    "mutation StackLensIssueCreate($input: IssueCreateInput!) "
    f"{{ issueCreate(input: $input) {{ success issue {{ {ISSUE_FIELDS} }} }} }}"
)
ISSUE_QUERY = f"query StackLensIssue($id: String!) {{ issue(id: $id) {{ {ISSUE_FIELDS} }} }}"
SEARCH_QUERY = (
    "query StackLensMarker($key: String!, $marker: String!) { issues(first: 1, filter: { team: { key: { eq: $key } },"
    f" description: {{ contains: $marker }} }}) {{ nodes {{ {ISSUE_FIELDS} }} }} }}"
)


class Linear(Tracker):
    label = "Linear"

    @property
    def endpoint(self) -> str:
        base = strip_base(self.connection.base_url or PUBLIC)
        return base if base.endswith("/graphql") else f"{base}/graphql"

    def headers(self) -> dict[str, str]:
        return {"Authorization": self.connection.token}  # a personal API key goes without "Bearer"

    def graphql(
        self, query: str, variables: dict[str, Any], what: str, *, creates: bool = False
    ) -> dict[str, Any]:
        payload = {"query": query, "variables": variables}
        data = self.call("POST", self.endpoint, payload, what=what, creates=creates)
        if not isinstance(data, dict):
            raise TrackerUnavailable(f"Linear answered {what} without data")
        errors = data.get("errors")
        if errors:
            message = "; ".join(str(e.get("message", e)) if isinstance(e, dict) else str(e) for e in errors)
            auth = any(
                isinstance(e, dict) and (e.get("extensions") or {}).get("code") == "AUTHENTICATION_ERROR"
                for e in errors
            )
            if auth:
                raise TrackerRefused(f"Linear refused the API key for {what}: {message[:200]}")
            raise TrackerRefused(f"Linear refused {what}: {message[:300]}")
        return data.get("data") or {}

    def refusal(self, answer: OutboundResponse, what: str, attempts: int = 1) -> TrackerError:
        """Linear answers a bad key with HTTP 400 and a GraphQL error coded AUTHENTICATION_ERROR."""
        if answer.status == 400 and "AUTHENTICATION_ERROR" in answer.body:
            return TrackerRefused(f"Linear refused the API key for {what}: check the key (Settings › API)")
        return super().refusal(answer, what, attempts)

    def account(self) -> Account:
        data = self.graphql(VIEWER_QUERY, {}, "the key's user (viewer)")
        viewer = data.get("viewer") or {}
        teams = (data.get("teams") or {}).get("nodes") or []
        return Account(
            name=str(viewer.get("name") or viewer.get("email") or ""),
            targets=[str(t["key"]) for t in teams if t.get("key")],
        )

    def create(self, target: str, title: str, body: Document) -> Ticket:
        team = self._team_id(_team(target))
        data = self.graphql(
            CREATE_MUTATION,
            {"input": {"teamId": team, "title": title, "description": to_markdown(body)}},
            f"team {target}",
            creates=True,
        )
        payload = data.get("issueCreate") or {}
        if not payload.get("success") or not payload.get("issue"):
            raise TrackerUnavailable(f"Linear did not create the issue in team {target}")
        return _ticket(payload["issue"])

    def get(self, reference: str, target: str = "") -> Ticket:
        key = parse_reference(reference, target)
        data = self.graphql(ISSUE_QUERY, {"id": key}, f"issue {key}")
        if not data.get("issue"):
            raise TrackerRefused(f"Linear found no issue {key}, or the key cannot see it")
        return _ticket(data["issue"])

    def find_marker(self, target: str, marker: str) -> Ticket | None:
        data = self.graphql(SEARCH_QUERY, {"key": _team(target), "marker": marker}, f"a search in {target}")
        nodes = (data.get("issues") or {}).get("nodes") or []
        return _ticket(nodes[0]) if nodes else None

    def _team_id(self, key: str) -> str:
        data = self.graphql(TEAMS_QUERY, {"key": key}, f"team {key}")
        nodes = (data.get("teams") or {}).get("nodes") or []
        if not nodes:
            raise TrackerRefused(f"Linear has no team {key} that this key can see (404)")
        return str(nodes[0]["id"])


def _ticket(issue: dict[str, Any]) -> Ticket:
    state = (issue.get("state") or {}).get("type")
    return Ticket(
        key=str(issue.get("identifier", "")),
        url=str(issue.get("url", "")),
        state="closed" if state in ("completed", "canceled") else "open",
        target=str((issue.get("team") or {}).get("key", "")),
    )


def _team(target: str) -> str:
    target = (target or "").strip()
    if not TEAM_RE.match(target):
        raise TrackerRefused(f"target: a Linear team is given by its key, like ENG (got {target[:80]!r})")
    return target.upper()


def parse_reference(reference: str, target: str) -> str:
    """``https://linear.app/ws/issue/ENG-12/slug``, ``ENG-12``, or ``12`` in the team ``target``."""
    text = reference.strip()
    if "://" in text:
        parts = urlsplit(text).path.strip("/").split("/")
        text = parts[parts.index("issue") + 1] if "issue" in parts[:-1] else ""
    if text.isdigit() and target:
        text = f"{_team(target)}-{text}"
    if KEY_RE.match(text):
        return text.upper()
    raise TrackerRefused(f"reference: give a Linear issue URL or key like ENG-12 (got {reference[:80]!r})")
