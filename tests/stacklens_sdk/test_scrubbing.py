"""What the scrubber filters and how breadcrumbs are categorised."""

from __future__ import annotations

from sentry_sdk.utils import AnnotatedValue

from stacklens_sdk.scrubbing import StacklensScrubber, categorise_breadcrumb


def _plain(value: object) -> object:
    if isinstance(value, AnnotatedValue):
        return value.value
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def test_headers_body_and_frames_are_filtered() -> None:
    event = {
        "request": {
            "headers": {
                "Authorization": "Bearer t",
                "Cookie": "a=b",
                "X-Api-Key": "k",
                "X-Forwarded-For": "[Filtered]",
                "Accept": "*/*",
            },
            "data": {
                "user": {"password": "p", "card_number": "4111"},
                "items": [{"cvv": "123", "sku": "mug"}],
                "note": "ok",
            },
        },
        "exception": {
            "values": [
                {
                    "stacktrace": {
                        "frames": [
                            {
                                "in_app": False,
                                "vars": {"scope": {"headers": [["b'authorization'", "b'Bearer t'"]]}},
                            },
                            {
                                "in_app": True,
                                "vars": {
                                    "headers": [["b'cookie'", "b'a=b'"], ["b'accept'", "b'*/*'"]],
                                    "token": "t",
                                },
                            },
                        ]
                    }
                }
            ]
        },
    }
    StacklensScrubber().scrub_event(event)
    plain = _plain(event)
    assert plain["request"]["headers"] == {
        "Authorization": "[FILTERED]",
        "Cookie": "[FILTERED]",
        "X-Api-Key": "[FILTERED]",
        "X-Forwarded-For": "[FILTERED]",
        "Accept": "*/*",
    }
    assert plain["request"]["data"] == {
        "user": {"password": "[FILTERED]", "card_number": "[FILTERED]"},
        "items": [{"cvv": "[FILTERED]", "sku": "mug"}],
        "note": "ok",
    }
    vendor, app = plain["exception"]["values"][0]["stacktrace"]["frames"]
    assert "vars" not in vendor
    assert app["vars"] == {
        "headers": [["b'cookie'", "[FILTERED]"], ["b'accept'", "b'*/*'"]],
        "token": "[FILTERED]",
    }


def test_custom_denylist_and_vendor_vars_option() -> None:
    event = {
        "extra": {"internal_ref": "x", "other": 1},
        "exception": {"values": [{"stacktrace": {"frames": [{"in_app": False, "vars": {"a": "1"}}]}}]},
    }
    StacklensScrubber(denylist=["internal_ref"], vendor_frame_vars=True).scrub_event(event)
    plain = _plain(event)
    assert plain["extra"] == {"internal_ref": "[FILTERED]", "other": 1}
    assert plain["exception"]["values"][0]["stacktrace"]["frames"][0]["vars"] == {"a": "1"}


def test_breadcrumb_categories() -> None:
    assert categorise_breadcrumb({"type": "http", "category": "httplib"})["category"] == "http"
    log = categorise_breadcrumb({"type": "log", "category": "shop.db", "level": "info"})
    assert log["category"] == "console" and log["data"]["logger"] == "shop.db"
    assert categorise_breadcrumb({"type": "log", "category": "shop", "level": "error"})["category"] == "error"
    assert categorise_breadcrumb({"type": "default", "category": "ui.click"})["category"] == "ui.click"
    assert categorise_breadcrumb({"type": "default", "category": "auth"})["category"] == "auth"
