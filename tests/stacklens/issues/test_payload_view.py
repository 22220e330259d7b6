"""How a stored (scrubbed) event payload is shown: the exception chain, request, user, breadcrumbs, tags,
environment, the copy text and the two-event comparison."""

from __future__ import annotations

import json

from stacklens.issues import payload_breadcrumbs, payload_compare, payload_exceptions
from stacklens.issues import payload_view as pv
from tests.dashboards.landing import sdk_event


def _inner() -> None:
    raise KeyError("sku-17")


def _outer() -> None:
    try:
        _inner()
    except KeyError as exc:
        raise RuntimeError("checkout failed") from exc


def test_a_real_sdk_payload_is_shown_part_by_part() -> None:
    payload = sdk_event(
        _outer,
        user={"id": "u-1", "email": "ann@example.test"},
        tags={"tenant": "blue"},
        crumbs=[{"category": "http", "message": "GET /cart", "level": "info"}],
    )
    loaded = pv.load_payload(json.dumps(payload))
    assert loaded == payload and pv.load_payload("not json") == {} and pv.load_payload("") == {}

    chain = payload_exceptions.exceptions(loaded)
    # The raised exception first, then its cause; each stack starts where the error occurred.
    assert [(c["type"], c["value"]) for c in chain] == [
        ("RuntimeError", "checkout failed"),
        ("KeyError", "'sku-17'"),
    ]
    assert chain[1]["frames"][0]["function"] == "_inner" and chain[0]["frames"][0]["function"] == "_outer"
    text = payload_exceptions.copy_text(chain)
    assert "RuntimeError" in text and "checkout failed" in text and "_inner" in text

    assert pv.user_info(loaded) == {"id": "u-1", "email": "ann@example.test", "name": "", "ip_address": ""}
    no_columns: dict[str, str] = {}  # a row without environment or release: the payload's own tags
    assert ("tenant", "blue") in pv.tags(loaded, no_columns)
    crumbs = payload_breadcrumbs.breadcrumbs(loaded)
    assert any(c["message"] == "GET /cart" for c in crumbs)
    assert isinstance(pv.environment_info(loaded), dict)


def test_missing_or_malformed_parts_show_nothing_instead_of_failing() -> None:
    broken = {"exception": {"values": "nope"}, "user": 5, "breadcrumbs": [1, 2], "tags": "x", "request": []}
    assert payload_exceptions.exceptions(broken) == []
    assert pv.user_info(broken) is None
    assert [c["message"] for c in payload_breadcrumbs.breadcrumbs(broken)] == ["", ""]
    assert pv.request_data(broken) is None
    assert payload_exceptions.copy_text([]) == ""
    no_columns: dict[str, str] = {}
    view = payload_compare.compare_view(broken, no_columns)
    assert isinstance(view, dict) and all(isinstance(v, dict) for v in view.values())
