"""In-app inference as Sentry does it: vendor where code lives in installed packages or the runtime, the
project's module prefixes first, the SDK's own flag next; the culprit is the top in-app frame."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from stacklens.ingest.fields import Origin
from stacklens.ingest.in_app import NO_RULES, BadPrefix, InAppRules, culprit_of, frame_in_app, parse_prefixes
from stacklens.ingest.normalise import event_row
from stacklens.ingest.scrub import scrub_payload
from tests.stacklens.ingest.sdk_events import capture

ORIGIN = Origin(org_id=3, project_id=11, service=None, batch_id="b1", received_at=time.time())


@pytest.mark.parametrize(
    ("frame", "platform"),
    [
        ({"abs_path": "/srv/venv/lib/python3.12/site-packages/django/core/handlers.py"}, "python"),
        ({"abs_path": "/usr/lib/python3/dist-packages/requests/api.py"}, "python"),
        ({"abs_path": "/usr/lib/python3.11/json/decoder.py"}, "python"),
        ({"abs_path": "/root/.pyenv/versions/3.11.7/lib/python3.11/asyncio/events.py"}, "python"),
        ({"abs_path": "/usr/lib64/python3.9/threading.py"}, "python"),
        ({"abs_path": "/usr/lib/python311.zip/json/decoder.py"}, "python"),
        ({"abs_path": "C:\\Python311\\Lib\\json\\decoder.py"}, "python"),
        ({"abs_path": "C:\\proj\\.venv\\Lib\\site-packages\\flask\\app.py"}, "python"),
        ({"filename": "<frozen importlib._bootstrap>"}, "python"),
        ({"module": "json.decoder", "function": "raw_decode"}, "python"),
        ({"abs_path": "/app/node_modules/express/lib/router/index.js"}, "node"),
        ({"filename": "node:internal/process/task_queues"}, "node"),
        ({"module": "java.lang.Thread", "filename": "Thread.java"}, "java"),
        ({"module": "System.Linq.Enumerable"}, "csharp"),
        ({"package": "/usr/lib/system/libsystem_kernel.dylib", "function": "__pthread_kill"}, "cocoa"),
        ({"package": "C:\\Windows\\System32\\ntdll.dll", "function": "RtlUserThreadStart"}, "native"),
    ],
)
def test_code_of_packages_and_runtimes_is_vendor(frame: dict[str, Any], platform: str) -> None:
    assert frame_in_app(frame, platform=platform) is False


@pytest.mark.parametrize(
    ("frame", "platform"),
    [
        ({"abs_path": "/srv/shop/shop/views.py", "module": "shop.views"}, "python"),
        ({"abs_path": "/home/ada/lib/shop/views.py", "module": "shop.views"}, "python"),
        ({"module": "shop.views", "function": "checkout"}, "python"),
        ({"abs_path": "https://shop.example/static/app.4f3a9c21.js"}, "javascript"),
        ({"package": "/private/var/containers/Bundle/Application/ABC/Shop.app/Shop"}, "cocoa"),
        ({"module": "com.acme.shop.CheckoutService"}, "java"),
    ],
)
def test_the_applications_own_code_is_in_app(frame: dict[str, Any], platform: str) -> None:
    assert frame_in_app(frame, platform=platform) is True


def test_the_sdk_flag_then_the_project_rules_decide() -> None:
    vendor_path = {
        "abs_path": "/venv/lib/python3.12/site-packages/shop_core/pay.py",
        "module": "shop_core.pay",
    }
    assert frame_in_app({**vendor_path, "in_app": True}) is True  # the SDK said so
    assert frame_in_app({"abs_path": "/srv/shop/views.py", "in_app": False}) is False
    rules = InAppRules(include=("shop_core",), exclude=("shop.generated", "shop_core.vendored"))
    assert frame_in_app(vendor_path, rules) is True  # the project's include wins over the path
    assert frame_in_app({"module": "shop.generated.api", "in_app": True}, rules) is False
    assert frame_in_app({"module": "shop_core.vendored.x"}, rules) is True  # include wins, as sentry-python
    assert (
        frame_in_app({"module": "shop_corex.pay", "in_app": False}, rules) is False
    )  # a prefix, not a start


def test_prefixes_are_parsed_and_checked() -> None:
    assert parse_prefixes(" shop, shop.views.\nbilling  shop ") == ("shop", "shop.views", "billing")
    assert parse_prefixes("") == ()
    with pytest.raises(BadPrefix, match=r"'views\?' is not a module prefix"):
        parse_prefixes("shop views?")
    with pytest.raises(BadPrefix, match="at most 50 prefixes"):
        parse_prefixes(" ".join(f"m{n}" for n in range(51)))


def test_culprits_name_the_function_then_where_it_lives() -> None:
    assert culprit_of({"module": "shop.views", "function": "checkout"}, "python") == "checkout in shop.views"
    bundle = {"abs_path": "https://shop.example/static/app.4f3a9c21.js?v=2", "function": "pay"}
    assert culprit_of(bundle, "javascript") == "pay in app.js"
    assert culprit_of({"package": "/opt/render.dll", "function": "draw_frame"}, "native") == "draw_frame"
    assert culprit_of({"module": "shop.views"}, "python") == "? in shop.views"


def _decode(text: str) -> Any:
    return json.loads(text)


def _row(payload: dict[str, Any], rules: InAppRules = NO_RULES) -> dict[str, Any]:
    payload = scrub_payload(payload)
    return event_row(payload, ORIGIN, b"{}", json.dumps(payload), in_app_rules=rules)


def test_sentry_python_events_without_flags_get_a_culprit() -> None:
    """A real sentry-python capture whose project root is elsewhere (a service started outside its source
    tree): the SDK marks no frame, and the standard library's frames are under the error."""
    payload = capture(lambda: _decode("{broken"), project_root="/nonexistent")
    frames = payload["exception"]["values"][-1]["stacktrace"]["frames"]
    assert {f.get("in_app") for f in frames} == {None}, "the SDK left in_app unset"
    assert any("/json/" in f["abs_path"] for f in frames)
    row = _row(payload)
    assert row["culprit"] == f"_decode in {__name__}"
    assert row["in_app_frames"][0] == f"{__name__}:_decode"
    assert not any(label.startswith("json.") for label in row["in_app_frames"])

    # The project's rules move it: the standard library's json included, this module excluded.
    moved = _row(payload, InAppRules(include=("json",), exclude=(__name__,)))
    assert moved["culprit"] == "raw_decode in json.decoder"
    assert f"{__name__}:_decode" not in moved["in_app_frames"]
    assert moved["fingerprint"] == row["fingerprint"]  # display only: the same issue
