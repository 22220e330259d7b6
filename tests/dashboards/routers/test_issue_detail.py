"""What the issue page shows, as HTML: controls that say what they do, no bare labels for fields an event does
not carry, extra data as its keys and values, a header that starts with the culprit (never a stray "·"), and
frames marked in-app or vendor as ingest infers them, the project's in-app rules included."""

from __future__ import annotations

import re
import time
import uuid
from html.parser import HTMLParser
from typing import Any

from tests.dashboards.conftest import csrf_of, sign_in
from tests.dashboards.landing import land, sdk_event


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("script", "style"):
            self._skip += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style"):
            self._skip -= 1

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self.parts.append(data)


def text_of(html: str) -> str:
    parser = _Text()
    parser.feed(html)
    return " ".join(" ".join(parser.parts).split())


def section(html: str, ident: str) -> str:
    found = re.search(rf'<(section|form|div|p)[^>]*id="{ident}"[^>]*>(.*?)</\1>', html, re.S)
    assert found, f"no #{ident}"
    return found.group(2)


def _checkout() -> None:
    order = {"id": 42}
    raise ValueError(f"order {order['id']} failed")


def _plain_event(**fields: Any) -> dict[str, Any]:
    """A minimal Python event: one frame the SDK did not mark, no user, no contexts."""
    return {
        "event_id": uuid.uuid4().hex,
        "platform": "python",
        "level": "error",
        "timestamp": time.time(),
        "exception": {
            "values": [
                {
                    "type": "RuntimeError",
                    "value": "stock sync failed",
                    "stacktrace": {
                        "frames": [
                            {
                                "abs_path": "/usr/lib/python3.11/threading.py",
                                "module": "threading",
                                "function": "run",
                            },
                            {
                                "abs_path": "/srv/shop/shop/stock.py",
                                "module": "shop.stock",
                                "function": "sync",
                            },
                            {
                                "abs_path": "/srv/venv/lib/python3.11/site-packages/httpx/_client.py",
                                "module": "httpx._client",
                                "function": "send",
                            },
                        ]
                    },
                }
            ]
        },
        **fields,
    }


def _page(client, org: dict[str, Any], issue_id: int, **params: str) -> str:
    base = f"/orgs/{org['org_slug']}/projects/{org['project']}/issues"
    answer = client.get(f"{base}/{issue_id}", params=params)
    assert answer.status_code == 200, answer.text
    return answer.text


def test_controls_have_labels_and_empty_fields_are_left_out(client, org_factory) -> None:
    org = org_factory()
    (row,) = land(
        org["org_id"],
        org["project_id"],
        [
            sdk_event(
                _checkout,
                user={"id": "u-7"},
                extra={"order": {"id": 42, "lines": [1, 2]}, "note": "", "flags": {}},
                project_root="/nonexistent",
            )
        ],
    )
    sign_in(client, org["email"])
    html = _page(client, org, row["issue_id"])

    # The ignore and share controls say what each field does, in words on the page.
    ignore = section(html, "ignore-form")
    for label in ("Ignore", "N more events", "Date (UTC)"):
        assert re.search(rf'<label for="ignore-[a-z]+">{re.escape(label)}</label>', ignore), label
    assert "Ignore issue</button>" in ignore
    share = section(html, "share-form")
    for label in ("Share", "Time range", "From (UTC)", "To (UTC)", "Link expires after"):
        assert re.search(rf'<label for="share-[a-z]+">{re.escape(label)}</label>', share), label
    # Each labelled control exists under the id its label names.
    for ident in re.findall(r'<label for="([^"]+)">', ignore + share):
        assert f'id="{ident}"' in ignore + share, ident

    # The header starts with the culprit inferred from the top in-app frame (the SDK marked none).
    meta = text_of(section(html, "issue-meta"))
    assert meta.startswith(f"_checkout in {_checkout.__module__} · unresolved · all time: 1 event · "), meta

    # The user has only an id: only that row. Environment and release say which is which.
    user = text_of(section(html, "user"))
    assert user == "User ID u-7", user
    event_meta = text_of(section(html, "event-meta"))
    assert re.search(r" UTC · environment production · release \S+$", event_meta), event_meta
    environment = text_of(section(html, "environment"))
    # The SDK ran without its integrations: only the server name is known, so only it is listed.
    assert re.fullmatch(r"Environment Server \S+", environment), environment

    # Extra data reads as its keys and values, nested as sent; never "{1 keys}".
    extra = text_of(section(html, "extra-data"))
    assert "order id 42 lines [1, 2]" in extra and "note empty text" in extra and "flags empty" in extra
    assert "keys}" not in html and "items]" not in html


def test_a_header_without_culprit_starts_with_the_status(client, org_factory) -> None:
    org = org_factory()
    message = {
        "event_id": uuid.uuid4().hex,
        "platform": "python",
        "level": "warning",
        "timestamp": time.time(),
        "message": "disk almost full",
    }
    (row,) = land(org["org_id"], org["project_id"], [message])
    assert row["culprit"] == ""
    sign_in(client, org["email"])
    html = _page(client, org, row["issue_id"])
    meta = text_of(section(html, "issue-meta"))
    assert meta.startswith("unresolved · all time: 1 event · "), meta
    # Neither environment nor release: the event line ends with its time, no separator left dangling.
    event_meta = text_of(section(html, "event-meta"))
    assert event_meta.endswith(" UTC") and "·  ·" not in event_meta, event_meta
    # The history row names what the event lacks instead of leaving bare cells.
    history = text_of(section(html, "history"))
    assert re.search(r" UTC not set not set not set ", history), history
    assert text_of(section(html, "environment")).startswith("Environment The event carries no runtime")
    assert "No breadcrumbs." in html


def test_frames_are_marked_as_ingest_infers_them_and_follow_the_project_rules(client, org_factory) -> None:
    org = org_factory()
    (row,) = land(org["org_id"], org["project_id"], [_plain_event()])
    assert row["culprit"] == "sync in shop.stock"
    assert row["in_app_frames"] == ["shop.stock:sync"]
    sign_in(client, org["email"])

    def badges() -> dict[str, str]:
        html = _page(client, org, row["issue_id"])
        found = re.findall(
            r'<li class="frame (in-app|vendor)[^"]*">.*?<code class="fn">([^<]+)</code>',
            section(html, "stack"),
            re.S,
        )
        return {function: kind for kind, function in found}

    assert badges() == {"send": "vendor", "sync": "in-app", "run": "vendor"}

    settings_path = f"/orgs/{org['org_slug']}/projects/{org['project']}/settings"
    page = client.get(settings_path).text
    assert 'id="in-app-include"' in page
    refused = client.post(
        settings_path + "/in-app", data={"include": "httpx?", "exclude": "", "csrf_token": csrf_of(page)}
    )
    assert refused.status_code == 400 and "&#39;httpx?&#39; is not a module prefix" in refused.text
    saved = client.post(
        settings_path + "/in-app",
        data={"include": "httpx", "exclude": "shop.stock", "csrf_token": csrf_of(page)},
        follow_redirects=False,
    )
    assert saved.status_code == 303 and saved.headers["location"].endswith("/settings#in-app")
    page = client.get(settings_path).text
    assert ">httpx</textarea>" in page and ">shop.stock</textarea>" in page
    assert badges() == {"send": "in-app", "sync": "vendor", "run": "vendor"}
