"""The Sentry protocol endpoints through a real uvicorn server and the real control store and warehouse:
every auth form, encoding and item type, Relay's answers, DSNs, and a corpus of many platforms' events."""

from __future__ import annotations

import gzip
import json
import time
import uuid
import zlib
from typing import Any

import brotli
import httpx
import pytest
import zstandard

from stacklens.control import accounts
from stacklens.control.db import session_scope
from stacklens.control.keys.lifecycle import create_app_key
from stacklens.settings import Settings
from tests.api.routers.test_ingest import transaction_payload
from tests.api.sentry_live import envelope, event_item, fresh_event, stored, stored_title


def test_every_auth_form_and_the_refusals(dsn_server: str, make_org) -> None:
    org = make_org()
    other = make_org("Other Org")
    url = f"{dsn_server}/api/{org['project_id']}/envelope/"
    header_auth = {
        "X-Sentry-Auth": f"Sentry sentry_version=7, sentry_key={org['app_key']}, sentry_client=test/1"
    }
    events = [fresh_event() for _ in range(3)]

    by_header = httpx.post(url, content=envelope([event_item(events[0])]), headers=header_auth)
    by_query = httpx.post(
        url, params={"sentry_key": org["app_key"]}, content=envelope([event_item(events[1])])
    )
    dsn = f"http://{org['app_key']}@127.0.0.1/{org['project_id']}"
    by_dsn = httpx.post(
        url, content=envelope([event_item(events[2])], {"dsn": dsn, "event_id": events[2]["event_id"]})
    )
    for answer, event in zip((by_header, by_query, by_dsn), events, strict=True):
        assert answer.status_code == 200, answer.text
        assert answer.json() == {"id": event["event_id"]}
        assert answer.headers["access-control-allow-origin"] == "*"
        assert stored(org["org_id"], event["event_id"]) == 1

    missing = httpx.post(url, content=envelope([event_item(fresh_event())]))
    assert missing.status_code == 401 and missing.json()["error"] == "Application Not Found"
    unknown = httpx.post(url, params={"sentry_key": "stacklens_app_" + "Z" * 24}, content=envelope([]))
    foreign = httpx.post(url, params={"sentry_key": other["app_key"]}, content=envelope([]))
    assert unknown.status_code == foreign.status_code == 403
    assert unknown.json()["detail"] == foreign.json()["detail"], "another project's key must look unknown"
    assert httpx.post(f"{dsn_server}/api/abc/envelope/", content=b"{}").status_code == 404


@pytest.mark.parametrize("encoding", ["gzip", "deflate", "br", "zstd"])
def test_encodings(dsn_server: str, make_org, encoding: str) -> None:
    org = make_org()
    event = fresh_event()
    raw = envelope([event_item(event)])
    body = {
        "gzip": gzip.compress,
        "deflate": zlib.compress,
        "br": brotli.compress,
        "zstd": zstandard.ZstdCompressor().compress,
    }[encoding](raw)
    answer = httpx.post(
        f"{dsn_server}/api/{org['project_id']}/envelope/",
        params={"sentry_key": org["app_key"]},
        content=body,
        headers={"Content-Encoding": encoding},
    )
    assert answer.status_code == 200, answer.text
    assert stored(org["org_id"], event["event_id"]) == 1


def test_item_types_resends_and_bad_bodies(dsn_server: str, make_org) -> None:
    org = make_org()
    url = f"{dsn_server}/api/{org['project_id']}/envelope/"
    key = {"sentry_key": org["app_key"]}
    event, txn = fresh_event(), transaction_payload()
    body = envelope(
        [
            event_item(event),
            ({"type": "session"}, json.dumps({"sid": uuid.uuid4().hex, "status": "ok"}).encode()),
            ({"type": "attachment", "filename": "dump.txt"}, b"\x00\x01 binary attachment"),
            (
                {"type": "check_in"},
                json.dumps(
                    {"check_in_id": uuid.uuid4().hex, "monitor_slug": "nightly", "status": "ok"}
                ).encode(),
            ),
            ({"type": "some_future_type"}, b"{}"),
            (
                {"type": "client_report"},
                json.dumps({"timestamp": time.time(), "discarded_events": []}).encode(),
            ),
        ],
        {"event_id": event["event_id"]},
    )
    first = httpx.post(url, params=key, content=body, timeout=60)
    assert first.status_code == 200 and first.json() == {"id": event["event_id"]}
    assert stored(org["org_id"], event["event_id"]) == 1
    transaction = envelope([({"type": "transaction"}, json.dumps(txn).encode())])  # one event-like item each
    assert httpx.post(url, params=key, content=transaction).json() == {"id": txn["event_id"]}
    assert stored(org["org_id"], txn["event_id"], "transactions") == 1
    again = httpx.post(url, params=key, content=body, timeout=60)
    assert again.status_code == 200
    assert stored(org["org_id"], event["event_id"]) == 1, "a resent envelope lands nothing again"

    session = {"status": "ok", "started": time.time(), "attrs": {"release": "web@1.0.0"}}
    sessions_only = httpx.post(
        url, params=key, content=envelope([({"type": "session"}, json.dumps(session).encode())])
    )
    assert sessions_only.status_code == 200 and len(sessions_only.json()["id"]) == 32, "always an id"

    for bad, words in [
        (b"not json\n", "malformed envelope"),
        (envelope([({"type": "event"}, b"[1, 2]")]), "not a JSON object"),
        # An object that is no JSON inside goes into its line as sent; the line's parser says where it breaks.
        (
            envelope([({"type": "event"}, b'{"message": oops}')], {"event_id": uuid.uuid4().hex}),
            "not valid JSON: Expecting value: line 1 column",
        ),
    ]:
        answer = httpx.post(url, params=key, content=bad, timeout=60)
        assert answer.status_code == 400 and words in answer.json()["detail"], answer.text
    deep: dict[str, Any] = {}
    for _ in range(80):
        deep = {"d": deep}
    invalid = httpx.post(url, params=key, content=envelope([event_item({**fresh_event(), "extra": deep})]))
    assert invalid.status_code == 400, invalid.text  # nothing of it was kept: the answer says why
    assert invalid.json()["detail"].endswith("1: the JSON nests deeper than 64 levels"), invalid.text
    unsupported = httpx.post(url, params=key, content=b"x", headers={"Content-Encoding": "compress"})
    assert unsupported.status_code == 415
    corrupt = httpx.post(url, params=key, content=b"not gzip", headers={"Content-Encoding": "gzip"})
    assert corrupt.status_code == 400 and "not valid gzip" in corrupt.json()["detail"]
    # A bad envelope next to good ones loses nothing of theirs.
    assert stored(org["org_id"], event["event_id"]) == 1


def test_store_endpoint_cors_and_quota(dsn_server: str, settings: Settings, make_org) -> None:
    org = make_org()
    event = fresh_event()
    answer = httpx.post(
        f"{dsn_server}/api/{org['project_id']}/store/",
        content=json.dumps(event),
        headers={"X-Sentry-Auth": f"Sentry sentry_key={org['app_key']}, sentry_version=7"},
    )
    assert answer.status_code == 200 and answer.json() == {"id": event["event_id"]}
    assert stored(org["org_id"], event["event_id"]) == 1

    preflight = httpx.options(
        f"{dsn_server}/api/{org['project_id']}/envelope/",
        headers={"Origin": "https://shop.example", "Access-Control-Request-Method": "POST"},
    )
    assert (
        preflight.status_code == 200 and "x-sentry-auth" in preflight.headers["access-control-allow-headers"]
    )

    with session_scope(settings) as session:
        accounts.set_quota(session, org["org_id"], events_per_minute=2)
    answers = [
        httpx.post(
            f"{dsn_server}/api/{org['project_id']}/envelope/",
            params={"sentry_key": org["app_key"]},
            content=envelope([event_item(fresh_event())]),
        )
        for _ in range(4)
    ]
    limited = [a for a in answers if a.status_code == 429]
    assert limited, [a.status_code for a in answers]
    assert limited[0].json()["error"] == "Rate Limited"
    retry = limited[0].headers["retry-after"]
    assert limited[0].headers["x-sentry-rate-limits"] == f"{retry}::organization:org_quota"


def test_projects_api_and_settings_page_show_the_dsn_that_works(
    dsn_server: str, settings: Settings, make_org
) -> None:
    org = make_org()
    with session_scope(settings) as session:
        worker = create_app_key(session, org["project_id"], "order_mail")
    listed = httpx.get(
        f"{dsn_server}/api/projects", headers={"Authorization": f"Bearer {org['api_key']}"}
    ).json()
    keys = listed["projects"][0]["app_keys"]
    dsns = {k["service"]: k["dsn"] for k in keys}
    assert dsns[None] == dsn_server.replace("http://", f"http://{org['app_key']}@") + f"/{org['project_id']}"
    assert dsns["order_mail"].startswith(f"http://{worker}@")
    # The listed DSN is one a Sentry SDK can send with.
    event = fresh_event()
    dsn = dsns["order_mail"]
    key = dsn.split("//")[1].split("@")[0]
    answer = httpx.post(
        f"{dsn_server}/api/{org['project_id']}/envelope/",
        params={"sentry_key": key},
        content=envelope([event_item(event)]),
    )
    assert answer.status_code == 200 and stored(org["org_id"], event["event_id"]) == 1


def test_older_keys_with_a_dash_keep_working_without_a_dsn(settings: Settings, make_org) -> None:
    from stacklens.control.keys.dsn import project_dsns
    from stacklens.control.keys.values import validate_service
    from stacklens_contract.keys import is_app_key

    org = make_org()
    with pytest.raises(ValueError, match="allows no '-'"):
        validate_service("order-mail")
    old = "stacklens_app_order-mail_" + "A" * 24
    assert is_app_key(old), "keys made before DSNs keep their shape"
    with session_scope(settings) as session:
        dsns = project_dsns(
            session,
            org["project_id"],
            settings.model_copy(update={"public_url": "https://stacklens.example"}),
        )
    assert list(dsns.values()) == [f"https://{org['app_key']}@stacklens.example/{org['project_id']}"]


def test_a_corpus_of_platforms_lands_titled_and_findable(dsn_server: str, make_org) -> None:
    from tests.api.sentry_corpus import CORPUS

    org = make_org()
    bearer = {"Authorization": f"Bearer {org['api_key']}"}
    sent: dict[str, dict[str, Any]] = {}
    for i, (name, build) in enumerate(CORPUS.items()):
        payload = build()
        if i % 2:  # half through the legacy store endpoint
            answer = httpx.post(
                f"{dsn_server}/api/{org['project_id']}/store/",
                params={"sentry_key": org["app_key"]},
                content=json.dumps(payload),
            )
        else:
            answer = httpx.post(
                f"{dsn_server}/api/{org['project_id']}/envelope/",
                params={"sentry_key": org["app_key"]},
                content=envelope([event_item(payload)], {"event_id": payload["event_id"]}),
            )
        assert answer.status_code == 200, (name, answer.text)
        sent[name] = payload
    titles: dict[str, str] = {}
    for name, payload in sent.items():
        found = httpx.get(f"{dsn_server}/api/events/{payload['event_id']}", headers=bearer)
        assert found.status_code == 200, (name, found.text)
        titles[name] = stored_title(org["org_id"], payload["event_id"])
    assert all(titles.values()), titles
    assert titles["java-log"] == "Stack trace: execute in com.acme.billing.InvoiceJob"
    assert titles["csp"] == "Blocked 'script-src-elem' from 'evil.example'"
    assert titles["native"].startswith("EXCEPTION_ACCESS_VIOLATION_READ")
    assert titles["message"] == "payment p-17 declined by acquirer"
    issues = httpx.get(
        f"{dsn_server}/api/projects/{org['project']}/issues", params={"limit": 100}, headers=bearer
    ).json()["issues"]
    assert len(issues) == len(CORPUS), "every platform's event is an issue of its own"
    assert all(issue["title"] for issue in issues)
