"""A FastAPI app on real uvicorn records errors and requests through the SDK into the log file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.stacklens_sdk.helpers import lines_so_far, make_app_key, read_lines, wait_for

pytestmark = pytest.mark.slow

APP_DIR = Path(__file__).resolve().parent


def _transactions(lines: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    return [
        line["payload"]
        for line in lines
        if line["type"] == "transaction" and line["payload"].get("transaction") == name
    ]


def test_fastapi_errors_and_transactions(tmp_path: Path, start_server: Any) -> None:
    storage = tmp_path / "logs"
    key = make_app_key("api")
    server = start_server(
        APP_DIR, "app:app", {"STACKLENS_TEST_APP_KEY": key, "STACKLENS_TEST_STORAGE": str(storage)}
    )

    # Separate connections: uvicorn closes the connection of a request that ended in an exception.
    with httpx.Client(base_url=server.base_url, timeout=10) as client:
        response = client.post(
            "/checkout?coupon=SPRING",
            json={
                "items": ["mug", "shirt"],
                "card_number": "4111111111111111",
                "password": "hunter2",
                "note": "gift",
            },
            headers={
                "Authorization": "Bearer abc.def",
                "Cookie": "sessionid=s3cr3t",
                "X-Request-Id": "req-7",
            },
        )
        assert response.status_code == 500
    with httpx.Client(base_url=server.base_url, timeout=10) as client:
        assert client.get("/api/stock").status_code == 200

    assert wait_for(lambda: _transactions(lines_so_far(storage), "/api/stock"), timeout=15)
    lines = read_lines(storage)
    assert {line["app_key"] for line in lines} == {key}

    # -- the error event ------------------------------------------------------------------------------------
    events = [line["payload"] for line in lines if line["type"] == "event"]
    assert len(events) == 1
    event = events[0]
    exc = event["exception"]["values"][-1]
    assert exc["type"] == "PaymentDeclined" and "2500 cents" in exc["value"]
    assert exc["mechanism"]["handled"] is False
    frames = exc["stacktrace"]["frames"]
    top = frames[-1]
    assert top["function"] == "charge" and top["module"] == "app" and top["in_app"] is True
    assert top["vars"]["amount_cents"] == "2500"
    assert top["vars"]["attempts"] == "1"
    assert top["vars"]["card_number"] == "[FILTERED]"  # sensitive local variables are filtered too
    checkout = next(frame for frame in frames if frame["function"] == "checkout")
    assert checkout["vars"]["order_total"] == "2500"
    vendor = [frame for frame in frames if frame["in_app"] is False]
    assert vendor and all("vars" not in frame for frame in vendor), "framework frames: vendor, without locals"

    request = event["request"]
    assert request["method"] == "POST"
    assert request["url"] == f"{server.base_url}/checkout"
    assert request["query_string"] == "coupon=SPRING"
    headers = {k.lower(): v for k, v in request["headers"].items()}
    assert headers["authorization"] == "[FILTERED]"
    assert headers["cookie"] == "[FILTERED]"
    assert headers["x-request-id"] == "req-7"
    assert request["data"]["card_number"] == "[FILTERED]"
    assert request["data"]["password"] == "[FILTERED]"
    assert request["data"]["note"] == "gift" and request["data"]["items"] == ["mug", "shirt"]
    assert "hunter2" not in str(event) and "s3cr3t" not in str(event) and "abc.def" not in str(event)

    assert event["user"] == {"id": "42", "email": "ada@example.com", "username": "ada"}
    assert event["tags"]["plan"] == "pro" and event["tags"]["service"] == "api"
    assert event["extra"]["cart_size"] == 2
    assert event["environment"] == "staging" and event["release"] == "shop-api@2.0.1"
    assert event["server_name"]
    assert event["transaction"] == "/checkout"
    assert event["contexts"]["runtime"]["name"] == "CPython"

    crumbs = event["breadcrumbs"]["values"]
    by_category = {crumb["category"]: crumb for crumb in crumbs}
    assert by_category["ui"]["message"] == "checkout button pressed"
    assert by_category["console"]["message"] == "checkout started for 2 items"
    assert by_category["console"]["data"]["logger"] == "shop.checkout"
    assert by_category["http"]["data"]["url"].endswith("/api/price")
    assert by_category["http"]["data"]["http.response.status_code"] == 200

    # -- the http.server transactions -----------------------------------------------------------------------
    (failed,) = _transactions(lines, "/checkout")
    assert failed["contexts"]["trace"]["op"] == "http.server"
    assert failed["contexts"]["trace"]["status"] == "internal_error"
    assert failed["request"]["headers"]["authorization"] == "[FILTERED]"

    (stock,) = _transactions(lines, "/api/stock")
    assert stock["contexts"]["trace"]["op"] == "http.server"
    assert stock["contexts"]["trace"]["data"]["http.response.status_code"] == 200
    client_spans = [span for span in stock["spans"] if span["op"] == "http.client"]
    codes = sorted(span["data"]["http.response.status_code"] for span in client_spans)
    assert codes == [200, 404]
    assert all(span["description"].startswith("GET ") for span in client_spans)
