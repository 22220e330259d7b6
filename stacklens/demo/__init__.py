"""The demo that `make up` runs: a small shop instrumented with stacklens_sdk, its traffic, and a supervisor."""
