"""Linear (GraphQL at ``https://api.linear.app/graphql``, a personal API key sent as ``Authorization:
<key>``).

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
    member,
    strip_base,
    text,
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
        data = self.as_object(self.call("POST", self.endpoint, payload, what=what, creates=creates), what)
        errors = data.get("errors")
        if errors:
            listed = errors if isinstance(errors, list) else [errors]
            message = "; ".join(str(e.get("message", e)) if isinstance(e, dict) else str(e) for e in listed)
            auth = any(member(e, "extensions", "code") == "AUTHENTICATION_ERROR" for e in listed)
            if auth:
                raise TrackerRefused(f"Linear refused the API key for {what}: {message[:200]}")
            raise TrackerRefused(f"Linear refused {what}: {message[:300]}")
        return self.as_object(data.get("data") or {}, what)

    def refusal(self, answer: OutboundResponse, what: str, attempts: int = 1) -> TrackerError:
        """Linear answers a bad key with HTTP 400 and a GraphQL error coded AUTHENTICATION_ERROR."""
        if answer.status == 400 and "AUTHENTICATION_ERROR" in answer.body:
            return TrackerRefused(f"Linear refused the API key for {what}: check the key (Settings › API)")
        return super().refusal(answer, what, attempts)

    def account(self) -> Account:
        what = "the key's user (viewer)"
        data = self.graphql(VIEWER_QUERY, {}, what)
        teams = self.as_objects(member(data, "teams", "nodes"), what)
        name = text(member(data, "viewer", "name")) or text(member(data, "viewer", "email"))
        return Account(name=name, targets=[text(t.get("key")) for t in teams if text(t.get("key"))])

    def create(self, target: str, title: str, body: Document) -> Ticket:
        team = self._team_id(_team(target))
        what = f"team {target}"
        data = self.graphql(
            CREATE_MUTATION,
            {"input": {"teamId": team, "title": title, "description": to_markdown(body)}},
            what,
            creates=True,
        )
        if not member(data, "issueCreate", "success") or not member(data, "issueCreate", "issue"):
            raise TrackerUnavailable(f"Linear did not create the issue in team {target}")
        return self._ticket(member(data, "issueCreate", "issue"), f"the new issue in team {target}")

    def get(self, reference: str, target: str = "") -> Ticket:
        key = parse_reference(reference, target)
        what = f"issue {key}"
        data = self.graphql(ISSUE_QUERY, {"id": key}, what)
        if not data.get("issue"):
            raise TrackerRefused(f"Linear found no issue {key}, or the key cannot see it")
        return self._ticket(data["issue"], what)

    def find_marker(self, target: str, marker: str) -> Ticket | None:
        what = f"a search in {target}"
        data = self.graphql(SEARCH_QUERY, {"key": _team(target), "marker": marker}, what)
        nodes = self.as_objects(member(data, "issues", "nodes"), what)
        return self._ticket(nodes[0], what) if nodes else None

    def _team_id(self, key: str) -> str:
        what = f"team {key}"
        data = self.graphql(TEAMS_QUERY, {"key": key}, what)
        nodes = self.as_objects(member(data, "teams", "nodes"), what)
        if not nodes:
            raise TrackerRefused(f"Linear has no team {key} that this key can see (404)")
        return self.required(nodes[0], "id", what)

    def _ticket(self, data: object, what: str) -> Ticket:
        issue = self.as_object(data, what)
        state = member(issue, "state", "type")
        return Ticket(
            key=self.required(issue, "identifier", what),
            url=text(issue.get("url")),
            state="closed" if state in ("completed", "canceled") else "open",
            target=text(member(issue, "team", "key")),
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
