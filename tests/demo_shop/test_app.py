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
