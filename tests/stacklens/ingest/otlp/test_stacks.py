"""``exception.stacktrace`` texts as each runtime prints them → Sentry frames, oldest first."""

from __future__ import annotations

import traceback

from stacklens.ingest.otlp.stacks import parse_stack


def _inner() -> None:
    raise KeyError("cart")


def test_a_real_python_traceback_with_a_chained_cause() -> None:
    try:
        try:
            _inner()
        except KeyError as exc:
            raise RuntimeError("checkout failed") from exc
    except RuntimeError as exc:
        text = "".join(traceback.format_exception(exc))
    frames = parse_stack(text)
    # Only the raised exception's traceback: the test, not _inner (which is the cause's).
    assert [f["function"] for f in frames] == ["test_a_real_python_traceback_with_a_chained_cause"]
    assert frames[0]["module"] == "test_stacks"
    assert frames[0]["context_line"] == 'raise RuntimeError("checkout failed") from exc'


def test_java_innermost_last_and_causes_left_out() -> None:
    text = (
        "java.lang.IllegalStateException: no stock\n"
        "\tat com.shop.Stock.take(Stock.java:42)\n"
        "\tat com.shop.Checkout.run(Checkout.java:17)\n"
        "\tat java.base/java.lang.Thread.run(Native Method)\n"
        "Caused by: java.io.IOException: db\n"
        "\tat com.shop.Db.query(Db.java:9)\n"
    )
    frames = parse_stack(text)
    assert [(f["module"], f["function"], f.get("lineno")) for f in frames] == [
        ("java.base/java.lang.Thread", "run", None),
        ("com.shop.Checkout", "run", 17),
        ("com.shop.Stock", "take", 42),
    ]


def test_node_go_and_dotnet() -> None:
    node = "TypeError: x is undefined\n    at take (/app/stock.js:10:5)\n    at async /app/server.js:3:1\n"
    assert [(f["function"], f["filename"], f["lineno"], f["colno"]) for f in parse_stack(node)] == [
        ("?", "/app/server.js", 3, 1),
        ("take", "/app/stock.js", 10, 5),
    ]
    go = (
        "goroutine 1 [running]:\nmain.take(...)\n\t/app/stock.go:12 +0x1d\n"
        "main.main()\n\t/app/main.go:5 +0x25\n"
    )
    assert [(f["module"], f["function"], f["lineno"]) for f in parse_stack(go)] == [
        ("main", "main", 5),
        ("main", "take", 12),
    ]
    dotnet = (
        "System.InvalidOperationException: no stock\n"
        "   at Shop.Stock.Take(Int32 n) in C:\\src\\Stock.cs:line 42\n"
        "   at Shop.Checkout.Run() in C:\\src\\Checkout.cs:line 7\n"
    )
    assert [(f["module"], f["function"], f["filename"], f["lineno"]) for f in parse_stack(dotnet)] == [
        ("Shop.Checkout", "Run", "Checkout.cs", 7),
        ("Shop.Stock", "Take", "Stock.cs", 42),
    ]


def test_an_unknown_format_gives_no_frames() -> None:
    assert parse_stack("something went wrong\nsomewhere") == []
