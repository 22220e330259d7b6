"""A real local HTTP server speaking the four trackers' APIs as they document them, strictly.

GitHub Enterprise (``/api/v3``), GitLab v4 (``/api/v4``), Jira Cloud v3 and Data Center v2 (``/rest/api/…``)
and Linear GraphQL (``/graphql``). Every request is checked — method, path (GitLab's URL-encoded project
path), auth header, body shape (Jira Cloud's description must be an Atlassian Document Format doc) — and a
deviation answers 400 and is listed in ``violations`` so a test fails on it. ``script`` queues faults for the
next requests: (status, headers, stall seconds). ``answers`` makes the server a look-alike that answers a
request path (without its query) with the given JSON — a list where an object belongs, and so on.
"""

from __future__ import annotations

import base64
import json
import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

GITHUB_TOKEN = "ghp_fakegithubtoken1234"
GITLAB_TOKEN = "glpat-fakegitlabtoken99"
JIRA_EMAIL, JIRA_TOKEN = "dev@example.com", "jira-api-token-77"
JIRA_PAT = "jira-dc-pat-55"
LINEAR_KEY = "lin_api_fakelinearkey42"

ADF_BLOCKS = {"paragraph", "heading", "codeBlock", "bulletList", "orderedList", "rule", "blockquote"}
ADF_MARKS = {"strong", "em", "code", "link", "strike", "underline"}


@dataclass
class Call:
    method: str
    path: str  # raw, as sent (GitLab's %2F stays encoded)
    headers: dict[str, str]
    body: Any
    at: float = field(default_factory=time.monotonic)  # when it arrived


@dataclass
class FakeTrackers:
    script: list[tuple[int, dict[str, str], float]] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)
    tickets: dict[str, dict[str, Any]] = field(default_factory=dict)  # key -> {title, body, state, target}
    answers: dict[str, Any] = field(default_factory=dict)  # request path -> the JSON answered (status 200)
    repos: tuple[str, ...] = ("acme/web", "acme/api")
    gitlab_projects: tuple[str, ...] = ("acme/platform/web",)
    jira_projects: tuple[str, ...] = ("OPS",)
    linear_teams: tuple[tuple[str, str], ...] = (("team-uuid-eng", "ENG"),)
    server: ThreadingHTTPServer | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def start(self) -> FakeTrackers:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                body = json.loads(raw) if raw else None
                call = Call(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                with fake.lock:
                    fake.calls.append(call)
                    fault = fake.script.pop(0) if fake.script else None
                if fault is not None:
                    status, headers, stall = fault
                    if stall:
                        time.sleep(stall)
                    if status:
                        self._answer(status, {"message": "scripted failure"}, headers)
                        return
                path = urlsplit(call.path).path
                if path in fake.answers:
                    self._answer(200, fake.answers[path])
                    return
                try:
                    status, answer = fake.route(call)
                except Violation as exc:
                    with fake.lock:
                        fake.violations.append(f"{call.method} {call.path}: {exc}")
                    status, answer = 400, {"message": f"fake tracker: {exc}"}
                self._answer(status, answer)

            def _answer(self, status: int, answer: Any, headers: dict[str, str] | None = None) -> None:
                data = json.dumps(answer).encode()
                try:
                    self.send_response(status)
                    for k, v in (headers or {}).items():
                        self.send_header(k, v)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)

            do_GET = do_POST = do_PUT = do_DELETE = _handle

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()

    def close_ticket(self, key: str) -> None:
        self.tickets[key]["state"] = "closed"

    # -- routing ---------------------------------------------------------------------------------------
    def route(self, call: Call) -> tuple[int, Any]:
        path = urlsplit(call.path).path
        if path.startswith("/api/v3/"):
            return self.github(call)
        if path.startswith("/api/v4/"):
            return self.gitlab(call)
        if path.startswith("/rest/api/3/"):
            return self.jira(call, cloud=True)
        if path.startswith("/rest/api/2/"):
            return self.jira(call, cloud=False)
        if path == "/graphql":
            return self.linear(call)
        raise Violation(f"no such API path {path}")

    def _new(self, key: str, target: str, title: str, body: str) -> dict[str, Any]:
        ticket = {"key": key, "title": title, "body": body, "state": "open", "target": target}
        self.tickets[key] = ticket
        return ticket

    # -- GitHub REST ---------------------------------------------------------------------------------
    def github(self, call: Call) -> tuple[int, Any]:
        h = call.headers
        if h.get("authorization") != f"Bearer {GITHUB_TOKEN}":
            return 401, {"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest"}
        if h.get("accept") != "application/vnd.github+json" or h.get("x-github-api-version") != "2022-11-28":
            raise Violation("GitHub wants Accept: application/vnd.github+json and X-GitHub-Api-Version")
        parts = urlsplit(call.path)
        path, query = parts.path.removeprefix("/api/v3"), parse_qs(parts.query)
        if call.method == "GET" and path == "/user":
            return 200, {"login": "octocat", "id": 1}
        if call.method == "GET" and path == "/user/repos":
            return 200, [{"full_name": r, "private": True} for r in self.repos]
        if call.method == "GET" and path == "/search/issues":
            q = query.get("q", [""])[0]
            marker = re.search(r'"([^"]+)"', q)
            in_repo = re.search(r"repo:(\S+)", q)
            if not marker or not in_repo or "is:issue" not in q:
                raise Violation(f"search query {q!r} lacks a quoted marker, repo: or is:issue")
            items = [
                self._gh(t)
                for t in self.tickets.values()
                if t["target"] == in_repo.group(1) and marker.group(1) in t["body"] and "#" in t["key"]
            ]
            return 200, {"total_count": len(items), "incomplete_results": False, "items": items}
        m = re.fullmatch(r"/repos/([^/]+/[^/]+)/issues(?:/(\d+))?", path)
        if not m:
            raise Violation(f"GitHub has no {call.method} {path}")
        repo, number = m.group(1), m.group(2)
        if repo not in self.repos:
            return 404, {"message": "Not Found"}
        if call.method == "POST" and number is None:
            body = call.body
            if (
                not isinstance(body, dict)
                or set(body) != {"title", "body"}
                or not all(isinstance(v, str) for v in body.values())
            ):
                raise Violation(f"create issue body must be {{title, body}} strings, got {body!r}")
            n = 1 + sum(1 for k in self.tickets if k.startswith(repo + "#"))
            return 201, self._gh(self._new(f"{repo}#{n}", repo, body["title"], body["body"]))
        if call.method == "GET" and number is not None:
            ticket = self.tickets.get(f"{repo}#{number}")
            return (200, self._gh(ticket)) if ticket else (404, {"message": "Not Found"})
        raise Violation(f"GitHub has no {call.method} {path}")

    def _gh(self, t: dict[str, Any]) -> dict[str, Any]:
        repo, number = t["key"].split("#")
        return {
            "number": int(number),
            "html_url": f"https://github.example.com/{repo}/issues/{number}",
            "state": t["state"],
            "title": t["title"],
            "body": t["body"],
        }

    # -- GitLab REST v4 ------------------------------------------------------------------------------
    def gitlab(self, call: Call) -> tuple[int, Any]:
        if call.headers.get("private-token") != GITLAB_TOKEN:
            return 401, {"message": "401 Unauthorized"}
        parts = urlsplit(call.path)
        path, query = parts.path.removeprefix("/api/v4"), parse_qs(parts.query)
        if call.method == "GET" and path == "/user":
            return 200, {"id": 7, "username": "gitlab-dev"}
        if call.method == "GET" and path == "/projects":
            return 200, [{"id": i + 1, "path_with_namespace": p} for i, p in enumerate(self.gitlab_projects)]
        m = re.fullmatch(r"/projects/([^/]+)/issues(?:/(\d+))?", path)
        if not m:
            raise Violation(f"GitLab has no {call.method} {path} (is the project path URL-encoded?)")
        project, iid = unquote(m.group(1)), m.group(2)
        if "/" in project and "%2F" not in m.group(1):
            raise Violation("the project path must be URL-encoded (%2F)")
        if project not in self.gitlab_projects:
            return 404, {"message": "404 Project Not Found"}
        if call.method == "POST" and iid is None:
            body = call.body
            if not isinstance(body, dict) or set(body) != {"title", "description"}:
                raise Violation(f"new issue body must be {{title, description}}, got {body!r}")
            n = 1 + sum(1 for k in self.tickets if k.startswith(project + "#"))
            return 201, self._gl(self._new(f"{project}#{n}", project, body["title"], body["description"]))
        if call.method == "GET" and iid is None:
            search = query.get("search", [""])[0]
            if query.get("in") != ["description"] or not search:
                raise Violation("a marker search needs search= and in=description")
            return 200, [
                self._gl(t) for t in self.tickets.values() if t["target"] == project and search in t["body"]
            ]
        ticket = self.tickets.get(f"{project}#{iid}")
        return (200, self._gl(ticket)) if ticket else (404, {"message": "404 Not found"})

    def _gl(self, t: dict[str, Any]) -> dict[str, Any]:
        project, iid = t["key"].split("#")
        state = "closed" if t["state"] == "closed" else "opened"
        return {
            "iid": int(iid),
            "web_url": f"https://gitlab.example.com/{project}/-/issues/{iid}",
            "state": state,
        }

    # -- Jira Cloud v3 / Data Center v2 -------------------------------------------------------------
    def jira(self, call: Call, cloud: bool) -> tuple[int, Any]:
        auth = call.headers.get("authorization", "")
        if cloud:
            expected = "Basic " + base64.b64encode(f"{JIRA_EMAIL}:{JIRA_TOKEN}".encode()).decode()
        else:
            expected = f"Bearer {JIRA_PAT}"
        if auth != expected:
            return 401, {"errorMessages": ["You are not authenticated."], "errors": {}}
        parts = urlsplit(call.path)
        path = parts.path.removeprefix("/rest/api/3" if cloud else "/rest/api/2")
        query = parse_qs(parts.query)
        if call.method == "GET" and path == "/myself":
            return 200, {"displayName": "Dana Dev", "emailAddress": JIRA_EMAIL}
        if cloud and call.method == "GET" and path == "/project/search":
            return 200, {
                "values": [{"key": k, "name": k.title()} for k in self.jira_projects],
                "isLast": True,
            }
        if not cloud and call.method == "GET" and path == "/project":
            return 200, [{"key": k, "name": k.title()} for k in self.jira_projects]
        if call.method == "GET" and path == ("/search/jql" if cloud else "/search"):
            jql = query.get("jql", [""])[0]
            m = re.fullmatch(r'project = "([A-Z0-9_]+)" AND text ~ "\\"(\w+)\\""', jql)
            if not m:
                raise Violation(f"unexpected JQL {jql!r}")
            found = [
                self._jira(t)
                for t in self.tickets.values()
                if t["target"] == m.group(1) and m.group(2) in json.dumps(t["body"])
            ]
            return 200, {"issues": found}
        if call.method == "POST" and path == "/issue":
            fields = (call.body or {}).get("fields")
            if not isinstance(fields, dict) or set(fields) != {
                "project",
                "summary",
                "description",
                "issuetype",
            }:
                raise Violation(f"fields must be project, summary, description, issuetype: {fields!r}")
            if not isinstance(fields["summary"], str) or len(fields["summary"]) > 255:
                raise Violation("summary must be text of at most 255 characters")
            if not isinstance(fields["issuetype"], dict) or not fields["issuetype"].get("name"):
                raise Violation("issuetype must be {name}")
            if cloud:
                check_adf(fields["description"])
            elif not isinstance(fields["description"], str):
                raise Violation("Data Center v2 takes a plain-text description")
            project = (fields["project"] or {}).get("key")
            if project not in self.jira_projects:
                return 400, {"errorMessages": [], "errors": {"project": "valid project is required"}}
            n = 1 + sum(1 for k in self.tickets if k.startswith(project + "-"))
            key = f"{project}-{n}"
            self._new(key, project, fields["summary"], fields["description"])
            return 201, {"id": str(10000 + n), "key": key, "self": f"{self.url}/rest/api/3/issue/{10000 + n}"}
        m = re.fullmatch(r"/issue/([A-Z0-9_]+-\d+)", path)
        if call.method == "GET" and m:
            ticket = self.tickets.get(m.group(1))
            if ticket is None:
                return 404, {
                    "errorMessages": ["Issue does not exist or you do not have permission to see it."]
                }
            return 200, self._jira(ticket)
        raise Violation(f"Jira has no {call.method} {path}")

    def _jira(self, t: dict[str, Any]) -> dict[str, Any]:
        category = "done" if t["state"] == "closed" else "new"
        return {
            "key": t["key"],
            "fields": {"status": {"name": category.title(), "statusCategory": {"key": category}}},
        }

    # -- Linear GraphQL ------------------------------------------------------------------------------
    def linear(self, call: Call) -> tuple[int, Any]:
        if call.method != "POST":
            raise Violation("Linear's GraphQL endpoint takes POST")
        if call.headers.get("authorization") != LINEAR_KEY:  # a personal key goes without "Bearer"
            return 400, {
                "errors": [
                    {"message": "Authentication required", "extensions": {"code": "AUTHENTICATION_ERROR"}}
                ]
            }
        body = call.body or {}
        query, variables = body.get("query", ""), body.get("variables", {})
        if not isinstance(query, str) or not isinstance(variables, dict):
            raise Violation("a GraphQL body is {query, variables}")
        teams = [{"id": i, "key": k, "name": k.title()} for i, k in self.linear_teams]
        if "viewer" in query:
            return 200, {
                "data": {"viewer": {"name": "Lin Ear", "email": "lin@example.com"}, "teams": {"nodes": teams}}
            }
        if query.startswith("query StackLensTeam"):
            return 200, {"data": {"teams": {"nodes": [t for t in teams if t["key"] == variables.get("key")]}}}
        if query.startswith("mutation StackLensIssueCreate") and "issueCreate(input: $input)" in query:
            data = variables.get("input") or {}
            if set(data) != {"teamId", "title", "description"}:
                raise Violation(f"IssueCreateInput must be teamId, title, description: {data!r}")
            team = next((t for t in teams if t["id"] == data["teamId"]), None)
            if team is None:
                return 200, {"errors": [{"message": "Entity not found: Team"}], "data": None}
            n = 1 + sum(1 for k in self.tickets if k.startswith(team["key"] + "-"))
            ticket = self._new(f"{team['key']}-{n}", team["key"], data["title"], data["description"])
            return 200, {"data": {"issueCreate": {"success": True, "issue": self._linear(ticket)}}}
        if query.startswith("query StackLensIssue("):
            found = self.tickets.get(str(variables.get("id")))
            if found is None:
                return 200, {"errors": [{"message": "Entity not found: Issue"}], "data": None}
            return 200, {"data": {"issue": self._linear(found)}}
        if query.startswith("query StackLensMarker"):
            nodes = [
                self._linear(t)
                for t in self.tickets.values()
                if t["target"] == variables.get("key") and variables.get("marker", "?") in t["body"]
            ]
            return 200, {"data": {"issues": {"nodes": nodes[:1]}}}
        raise Violation(f"unexpected GraphQL operation {query[:60]!r}")

    def _linear(self, t: dict[str, Any]) -> dict[str, Any]:
        return {
            "id": f"uuid-{t['key']}",
            "identifier": t["key"],
            "url": f"https://linear.app/acme/issue/{t['key']}/slug",
            "state": {"type": "completed" if t["state"] == "closed" else "unstarted"},
            "team": {"key": t["target"]},
        }


class Violation(Exception):
    """The request does not match the tracker's documented API."""


def check_adf(doc: Any) -> None:
    """The description is an ADF document: doc/version 1, known block nodes, non-empty text nodes."""
    if not isinstance(doc, dict) or doc.get("type") != "doc" or doc.get("version") != 1:
        raise Violation("description must be an ADF doc: {type: doc, version: 1, content: [...]}")
    if not isinstance(doc.get("content"), list) or not doc["content"]:
        raise Violation("an ADF doc needs content")
    for block in doc["content"]:
        if block.get("type") not in ADF_BLOCKS:
            raise Violation(f"ADF block {block.get('type')!r} is not a top-level block node")
        _check_nodes(block)


def _check_nodes(node: dict[str, Any]) -> None:
    if node.get("type") == "text":
        if not isinstance(node.get("text"), str) or not node["text"]:
            raise Violation("ADF text nodes must hold non-empty text")
        for mark in node.get("marks", []):
            if mark.get("type") not in ADF_MARKS:
                raise Violation(f"unknown ADF mark {mark!r}")
            if mark["type"] == "link" and not (mark.get("attrs") or {}).get("href"):
                raise Violation("an ADF link mark needs attrs.href")
        return
    if node.get("type") == "heading" and not 1 <= (node.get("attrs") or {}).get("level", 0) <= 6:
        raise Violation("an ADF heading needs attrs.level 1-6")
    for child in node.get("content", []):
        _check_nodes(child)
