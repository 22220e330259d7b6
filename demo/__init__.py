"""What `stacklens up` runs beside the service: customers and browsers using the demo shop (:mod:`demo_shop`),
their history, the demo's alerts, budgets and source maps. The core never imports it; `stacklens up` starts
these modules as processes (``python -m demo.driver``, ``demo.prepare``, ``demo.sourcemaps``,
``demo.catch_up``)."""
