"""Dashboard page routers, one module per area."""
