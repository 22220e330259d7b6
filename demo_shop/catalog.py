"""Products, prices and stock: the shop's read side."""

from __future__ import annotations

from dataclasses import dataclass


class ProductNotFound(LookupError):
    """Asked for a product id that is not in the catalog."""


class OutOfStock(RuntimeError):
    """Asked for more units than the warehouse holds."""


@dataclass(frozen=True)
class Product:
    id: int
    sku: str
    name: str
    price_cents: int
    stock: int
    category: str


PRODUCTS: dict[int, Product] = {
    p.id: p
    for p in (
        Product(1, "LNS-1001", "Prime lens 35mm", 42900, 12, "lenses"),
        Product(2, "LNS-1002", "Zoom lens 24-70mm", 129900, 3, "lenses"),
        Product(3, "CAM-2001", "Mirrorless body", 189900, 5, "cameras"),
        Product(4, "ACC-3001", "Lens cap 58mm", 900, 250, "accessories"),
        Product(5, "ACC-3002", "Tripod carbon", 24900, 0, "accessories"),
        Product(6, "ACC-3003", "ND filter kit", 7900, 40, "accessories"),
        Product(7, "CAM-2002", "Compact camera", 64900, 8, "cameras"),
        Product(8, "LNS-1003", "Macro lens 100mm", 89900, 1, "lenses"),
    )
}


def get_product(product_id: int) -> Product:
    try:
        return PRODUCTS[product_id]
    except KeyError:
        raise ProductNotFound(f"product {product_id} does not exist") from None


def reserve(product_id: int, quantity: int) -> Product:
    product = get_product(product_id)
    if quantity > product.stock:
        raise OutOfStock(f"only {product.stock} left of {product.sku}, asked for {quantity}")
    return product


def list_products(category: str | None = None) -> list[Product]:
    return [p for p in PRODUCTS.values() if category in (None, p.category)]
