"""Events of many platforms, shaped as their Sentry SDKs send them (the Sentry protocol's documented payload
interfaces: exception, threads, stacktrace frames, logentry, contexts, debug_meta, security reports).

Each builder returns a fresh payload with a new event id and the current time. The real-SDK events of the
suite (sentry-python, @sentry/node, @sentry/browser, sentry-cli) complete them in the tests.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import Any


def _base(platform: str, **extra: Any) -> dict[str, Any]:
    return {
        "event_id": uuid.uuid4().hex,
        "timestamp": time.time(),
        "platform": platform,
        "level": "error",
        "environment": "production",
        **extra,
    }


def python() -> dict[str, Any]:
    return _base(
        "python",
        exception={
            "values": [
                {
                    "type": "ZeroDivisionError",
                    "value": "division by zero",
                    "module": None,
                    "stacktrace": {
                        "frames": [
                            {
                                "filename": "app/views.py",
                                "module": "app.views",
                                "function": "ratio",
                                "lineno": 12,
                                "context_line": "    return a / b",
                                "in_app": True,
                                "vars": {"a": "1", "b": "0"},
                            }
                        ]
                    },
                    "mechanism": {"type": "excepthook", "handled": False},
                }
            ]
        },
        contexts={"runtime": {"name": "CPython", "version": "3.12.1"}},
        sdk={"name": "sentry.python", "version": "2.40.0"},
    )


def javascript() -> dict[str, Any]:
    return _base(
        "javascript",
        exception={
            "values": [
                {
                    "type": "TypeError",
                    "value": "Cannot read properties of undefined (reading 'id')",
                    "stacktrace": {
                        "frames": [
                            {
                                "filename": "https://shop.example/static/app.4f3a9c21.js",
                                "abs_path": "https://shop.example/static/app.4f3a9c21.js",
                                "function": "renderCart",
                                "lineno": 1,
                                "colno": 14321,
                                "in_app": True,
                            }
                        ]
                    },
                    "mechanism": {"type": "onerror", "handled": False},
                }
            ]
        },
        request={
            "url": "https://shop.example/cart",
            "headers": {
                "User-Agent": "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0.0.0 Safari/537.36"
            },
        },
        sdk={"name": "sentry.javascript.browser", "version": "11.12.0"},
    )


def node() -> dict[str, Any]:
    return _base(
        "node",
        exception={
            "values": [
                {
                    "type": "Error",
                    "value": "connect ECONNREFUSED 10.0.0.5:5432",
                    "stacktrace": {
                        "frames": [
                            {
                                "filename": "/srv/api/node_modules/pg/lib/client.js",
                                "module": "pg.lib:client",
                                "function": "Client._handleErrorEvent",
                                "lineno": 336,
                                "in_app": False,
                            },
                            {
                                "filename": "/srv/api/src/db.js",
                                "module": "db",
                                "function": "connect",
                                "lineno": 22,
                                "in_app": True,
                            },
                        ]
                    },
                }
            ]
        },
        contexts={"runtime": {"name": "node", "version": "v20.20.2"}},
    )


def java() -> dict[str, Any]:
    return _base(
        "java",
        exception={
            "values": [
                {
                    "type": "NullPointerException",
                    "module": "java.lang",
                    "value": 'Cannot invoke "Order.total()" because "order" is null',
                    "stacktrace": {
                        "frames": [
                            {
                                "module": "java.lang.Thread",
                                "function": "run",
                                "filename": "Thread.java",
                                "lineno": 833,
                                "in_app": False,
                            },
                            {
                                "module": "com.acme.shop.CheckoutService",
                                "function": "charge",
                                "filename": "CheckoutService.java",
                                "lineno": 57,
                                "in_app": True,
                            },
                        ]
                    },
                    "thread_id": 1,
                }
            ]
        },
        contexts={"runtime": {"name": "OpenJDK Runtime Environment", "version": "21.0.2"}},
    )


def java_log() -> dict[str, Any]:
    """A logback error without an exception: the stack is under `threads`."""
    return _base(
        "java",
        logger="com.acme.billing.InvoiceJob",
        threads={
            "values": [
                {
                    "id": 17,
                    "name": "scheduler-1",
                    "current": True,
                    "stacktrace": {
                        "frames": [
                            {"module": "java.lang.Thread", "function": "run", "in_app": False},
                            {
                                "module": "com.acme.billing.InvoiceJob",
                                "function": "execute",
                                "lineno": 88,
                                "in_app": True,
                            },
                        ]
                    },
                }
            ]
        },
    )


def android() -> dict[str, Any]:
    payload = java()
    payload["exception"]["values"][0].update(
        type="BadTokenException",
        module="android.view.WindowManager",
        value="Unable to add window -- token null is not valid",
    )
    payload["exception"]["values"][0]["stacktrace"]["frames"][1].update(
        module="com.acme.shop.ui.CartActivity", function="showDialog"
    )
    payload["contexts"] = {
        "device": {"model": "Pixel 8", "family": "Pixel", "memory_size": 8_000_000_000, "arch": "arm64-v8a"},
        "os": {"name": "Android", "version": "14"},
        "app": {"app_identifier": "com.acme.shop", "app_version": "5.2.0"},
    }
    payload["sdk"] = {"name": "sentry.java.android", "version": "7.14.0"}
    return payload


def cocoa() -> dict[str, Any]:
    return _base(
        "cocoa",
        exception={
            "values": [
                {
                    "type": "EXC_BAD_ACCESS",
                    "value": "KERN_INVALID_ADDRESS at 0x0000000000000010",
                    "thread_id": 0,
                    "mechanism": {
                        "type": "mach",
                        "handled": False,
                        "meta": {
                            "mach_exception": {
                                "exception": 1,
                                "code": 1,
                                "subcode": 16,
                                "name": "EXC_BAD_ACCESS",
                            }
                        },
                    },
                }
            ]
        },
        threads={
            "values": [
                {
                    "id": 0,
                    "crashed": True,
                    "current": True,
                    "name": "com.apple.main-thread",
                    "stacktrace": {
                        "frames": [
                            {
                                "function": "start",
                                "package": "/usr/lib/dyld",
                                "instruction_addr": "0x1a2b3c000",
                                "in_app": False,
                            },
                            {
                                "function": "-[CartViewController reload]",
                                "package": "/private/var/containers/Bundle/Application/ABC/Shop.app/Shop",
                                "instruction_addr": "0x102f41a20",
                                "in_app": True,
                            },
                        ]
                    },
                }
            ]
        },
        debug_meta={
            "images": [
                {
                    "type": "macho",
                    "code_file": "/private/var/containers/Bundle/Application/ABC/Shop.app/Shop",
                    "debug_id": "6a2ac9d2-4f1a-3f2c-9b8e-1c2d3e4f5a6b",
                    "image_addr": "0x102f00000",
                    "image_size": 901120,
                }
            ]
        },
        contexts={
            "os": {"name": "iOS", "version": "18.1"},
            "device": {"model": "iPhone16,1", "memory_size": 6_000_000_000},
        },
    )


def native() -> dict[str, Any]:
    return _base(
        "native",
        level="fatal",
        exception={
            "values": [
                {
                    "type": "EXCEPTION_ACCESS_VIOLATION_READ",
                    "value": "Fatal Error: EXCEPTION_ACCESS_VIOLATION_READ",
                    "thread_id": 3,
                    "mechanism": {"type": "minidump", "handled": False, "synthetic": True},
                }
            ]
        },
        threads={
            "values": [
                {
                    "id": 3,
                    "crashed": True,
                    "stacktrace": {
                        "frames": [
                            {
                                "function": "RtlUserThreadStart",
                                "package": "C:\\Windows\\System32\\ntdll.dll",
                                "instruction_addr": "0x7ff8a1b2c3d4",
                            },
                            {
                                "function": "Renderer::draw",
                                "package": "C:\\app\\render.dll",
                                "instruction_addr": "0x7ff7000a1b2c",
                                "in_app": True,
                            },
                        ]
                    },
                }
            ]
        },
        contexts={"os": {"name": "Windows", "version": "10.0.22631"}},
    )


def go() -> dict[str, Any]:
    return _base(
        "go",
        exception={
            "values": [
                {
                    "type": "*errors.errorString",
                    "value": "sql: no rows in result set",
                    "stacktrace": {
                        "frames": [
                            {
                                "function": "main",
                                "module": "main",
                                "abs_path": "/app/main.go",
                                "lineno": 40,
                                "in_app": True,
                            },
                            {
                                "function": "(*Store).Order",
                                "module": "github.com/acme/shop/store",
                                "abs_path": "/app/store/orders.go",
                                "lineno": 91,
                                "in_app": True,
                            },
                        ]
                    },
                }
            ]
        },
    )


def ruby() -> dict[str, Any]:
    return _base(
        "ruby",
        exception={
            "values": [
                {
                    "type": "ActiveRecord::RecordNotFound",
                    "value": "Couldn't find Order with 'id'=42",
                    "stacktrace": {
                        "frames": [
                            {
                                "filename": "app/controllers/orders_controller.rb",
                                "function": "show",
                                "lineno": 9,
                                "in_app": True,
                                "context_line": "    @order = Order.find(params[:id])",
                            }
                        ]
                    },
                }
            ]
        },
        contexts={"runtime": {"name": "ruby", "version": "3.3.0"}},
        transaction="OrdersController#show",
    )


def php() -> dict[str, Any]:
    return _base(
        "php",
        exception={
            "values": [
                {
                    "type": "TypeError",
                    "value": "App\\Cart::add(): Argument #1 ($sku) must be of type string, null given",
                    "stacktrace": {
                        "frames": [
                            {
                                "filename": "/var/www/src/Cart.php",
                                "function": "App\\Cart::add",
                                "lineno": 31,
                                "in_app": True,
                                "pre_context": ["<?php"],
                                "context_line": "    public function add(string $sku): void",
                            }
                        ]
                    },
                }
            ]
        },
    )


def dotnet() -> dict[str, Any]:
    return _base(
        "csharp",
        exception={
            "values": [
                {
                    "type": "System.InvalidOperationException",
                    "module": "System.Private.CoreLib",
                    "value": "Sequence contains no elements",
                    "stacktrace": {
                        "frames": [
                            {"module": "System.Linq.Enumerable", "function": "First", "in_app": False},
                            {
                                "module": "Acme.Shop.Services.PriceService",
                                "function": "Lowest",
                                "filename": "PriceService.cs",
                                "lineno": 44,
                                "in_app": True,
                            },
                        ]
                    },
                }
            ]
        },
        contexts={"runtime": {"name": ".NET", "version": "8.0.1"}, "os": {"name": "Linux"}},
    )


def elixir() -> dict[str, Any]:
    return _base(
        "elixir",
        exception={
            "values": [
                {
                    "type": "KeyError",
                    "value": 'key :price not found in: %{name: "lens"}',
                    "stacktrace": {
                        "frames": [
                            {
                                "module": "Shop.Cart",
                                "function": "total/1",
                                "filename": "lib/shop/cart.ex",
                                "lineno": 18,
                                "in_app": True,
                            }
                        ]
                    },
                }
            ]
        },
    )


def dart() -> dict[str, Any]:
    return _base(
        "dart",
        exception={
            "values": [
                {
                    "type": "StateError",
                    "value": "Bad state: No element",
                    "stacktrace": {
                        "frames": [
                            {
                                "abs_path": "package:shop/cart/cart_page.dart",
                                "function": "CartPage.build",
                                "lineno": 52,
                                "in_app": True,
                            }
                        ]
                    },
                }
            ]
        },
        sdk={"name": "sentry.dart.flutter", "version": "8.9.0"},
        contexts={"os": {"name": "Android", "version": "14"}},
    )


def csp_report() -> dict[str, Any]:
    return _base(
        "javascript",
        logger="csp",
        level="warning",
        csp={
            "document_uri": "https://shop.example/cart",
            "effective_directive": "script-src-elem",
            "violated_directive": "script-src-elem",
            "blocked_uri": "https://evil.example/x.js",
            "original_policy": "script-src 'self'",
        },
    )


def message_only() -> dict[str, Any]:
    return _base(
        "python",
        logentry={
            "message": "payment %s declined by %s",
            "params": ["p-17", "acquirer"],
            "formatted": "payment p-17 declined by acquirer",
        },
    )


def minimal() -> dict[str, Any]:
    return {"event_id": uuid.uuid4().hex, "timestamp": time.time(), "platform": "other"}


CORPUS: dict[str, Callable[[], dict[str, Any]]] = {
    "python": python,
    "javascript": javascript,
    "node": node,
    "java": java,
    "java-log": java_log,
    "android": android,
    "cocoa": cocoa,
    "native": native,
    "go": go,
    "ruby": ruby,
    "php": php,
    "dotnet": dotnet,
    "elixir": elixir,
    "dart": dart,
    "csp": csp_report,
    "message": message_only,
    "minimal": minimal,
}
