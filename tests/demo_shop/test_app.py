"""The demo shop's own pages: the URL `stacklens up` prints opens a page that says what the shop is."""

from __future__ import annotations

from fastapi.testclient import TestClient

from demo_shop.app import create_shop_app
from demo_shop.catalog import PRODUCTS


def test_home_page_describes_the_shop_and_links_its_api() -> None:
    client = TestClient(create_shop_app(seed=1))
    page = client.get("/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "<h1>Lens Shop</h1>" in page.text and "StackLens demo application" in page.text
    assert all(product.name in page.text for product in PRODUCTS.values())
    assert client.get("/api/products").status_code == 200


def test_home_page_loads_the_slow_handler_and_the_widget_from_the_other_host_name() -> None:
    # issue 69: the cart's slow first-party handler and a third party's widget (docs/performance.md, INP
    # causes)
    client = TestClient(create_shop_app(seed=1), base_url="http://127.0.0.1:8000")
    page = client.get("/").text
    assert '<script src="/static/shop.js">' in page and 'src="//localhost:8000/widget.js"' in page
    assert "addToCart" in client.get("/static/shop.js").text
    widget = client.get("/widget.js")
    assert "setInterval" in widget.text and widget.headers["access-control-allow-origin"] == "*"
