"""Source-map benchmark: symbolicating a 30-frame stack against a 5 MB map, and uploading a 20 MB bundle.

    nice -n 10 .venv/bin/python bench/sourcemaps.py                      # 5 MB map, 20 MB upload (the goals)
    nice -n 10 .venv/bin/python bench/sourcemaps.py --map-mb 2 --upload-mb 5

In a fresh embedded warehouse (own temporary data directory, every migration applied) and a real server
(uvicorn in this process): a minified file and its map of ``--map-mb`` MB (dense ``mappings`` over a few
long generated lines, as minifiers write them, with names and ``sourcesContent``) are uploaded with
``stacklens sourcemaps upload``; a 30-frame JavaScript event is then symbolicated as the issue page does
(manifest rows, cache lookup, 30 lookups, context lines), first with empty caches, then ``--runs`` times
cached (the manifest rows come from the process's cache then: no warehouse query). For comparison it times
the uncached manifest query, which every event paid before that cache. Separately a ``--upload-mb`` MB
bundle (maps of several entry points) is uploaded end to end: packing, chunks over HTTP, assembly, every
map checked, stored. Goals: ≤ 50 ms cached, ≤ 10 s for 20 MB."""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import shutil
import socket
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

LINE_WIDTH = 40_000  # generated columns per minified line
B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


def vlq(*values: int) -> str:
    """A source-map segment: each value base64-VLQ encoded."""
    out = []
    for value in values:
        rest = (-value << 1) | 1 if value < 0 else value << 1
        while True:
            digit, rest = rest & 31, rest >> 5
            out.append(B64[digit | (32 if rest else 0)])
            if not rest:
                break
    return "".join(out)


def make_build(folder: Path, name: str, target_bytes: int, seed: int) -> tuple[int, int]:
    """Write ``name`` (minified) and ``name.map`` of about ``target_bytes``; return (lines, tokens)."""
    rng = random.Random(seed)
    sources = [f"webpack://shop/src/module_{i}.js" for i in range(200)]
    contents = [
        "\n".join(f"export function fn_{i}_{n}(a, b) {{ return a * {n} + b; }}" for n in range(120))
        for i in range(len(sources))
    ]
    names = [f"fn_{i}_{n}" for i in range(40) for n in range(120)]
    budget = target_bytes - sum(len(c) for c in contents)
    lines_out: list[str] = []
    segments: list[str] = []
    column = src = oline = ocol = name_at = 0
    size, tokens = 0, 0
    while size < budget:
        step = rng.randint(3, 12)
        if column + step >= LINE_WIDTH:
            lines_out.append(",".join(segments))
            segments, column = [], 0
        new_src, new_line = rng.randrange(len(sources)), rng.randint(0, 119)
        new_col, new_name = rng.randint(0, 40), rng.randrange(len(names))
        segment = vlq(
            step if segments else column + step,
            new_src - src,
            new_line - oline,
            new_col - ocol,
            new_name - name_at,
        )
        column, src, oline, ocol, name_at = column + step, new_src, new_line, new_col, new_name
        segments.append(segment)
        size += len(segment) + 1
        tokens += 1
    lines_out.append(",".join(segments))
    line = len(lines_out) - 1
    encoded = {"version": 3, "file": name, "sources": sources, "names": names, "mappings": ";".join(lines_out),
               "sourcesContent": contents}  # fmt: skip
    (folder / f"{name}.map").write_text(json.dumps(encoded))
    # Code-like text (declarations every few dozen characters, as minifiers write), so resolving a frame's
    # enclosing function scans what it would in a real bundle.
    pattern = "function n(t){return t+1};var e=n(2);"
    minified = "\n".join((pattern * (LINE_WIDTH // len(pattern) + 1))[:LINE_WIDTH] for _ in range(line + 1))
    (folder / name).write_text(minified + f"\n//# sourceMappingURL={name}.map\n")
    return line + 1, tokens


def stack(lines: int, frames: int, seed: int = 3) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    return [
        {
            "abs_path": "https://shop.test/static/app.min.js",
            "filename": "/static/app.min.js",
            "function": rng.choice("abcdefghijklmnop"),
            "lineno": rng.randint(1, lines),
            "colno": rng.randint(100, LINE_WIDTH - 100),
            "in_app": True,
        }
        for _ in range(frames)
    ]


def upload(server: str, api_key: str, project: str, release: str, folder: Path) -> float:
    from stacklens.cli.main import main

    start = time.perf_counter()
    with contextlib.redirect_stdout(None):
        code = main(["sourcemaps", "upload", "--project", project, "--release", release,
                     "--url-prefix", "~/static/", "--url", server, "--api-key", api_key, str(folder)])  # fmt: skip
    assert code == 0, "upload failed"
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--map-mb", type=float, default=5)
    parser.add_argument("--upload-mb", type=float, default=20)
    parser.add_argument("--frames", type=int, default=30)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--profile", action="store_true", help="print where one cached run spends its time")
    args = parser.parse_args()

    import uvicorn

    from api.app import create_app
    from stacklens.control import accounts
    from stacklens.control.db import migrate_control_store, session_scope
    from stacklens.control.projects import create_project
    from stacklens.issues.payload_exceptions import exceptions
    from stacklens.settings import Settings
    from stacklens.sourcemaps.sourcemap import MapCache
    from stacklens.sourcemaps.store import candidate_files
    from stacklens.sourcemaps.symbolicate import Resolver, symbolicate
    from stacklens.warehouse.client import get_warehouse
    from stacklens.warehouse.migrations import apply_migrations

    work = Path(tempfile.mkdtemp(prefix="bench-sourcemaps-"))
    try:
        settings = Settings(
            data_dir=work / "data",
            warehouse_url=f"chdb://{work / 'warehouse'}",
            database_url=f"sqlite:///{work / 'control.db'}",
            secret_key="bench-secret-key-0123456789abcdef",
            run_schedules=False,
        )
        settings.data_dir.mkdir(parents=True)
        apply_migrations(settings)
        migrate_control_store(settings)
        with session_scope(settings) as session:
            org, api_key = accounts.create_organization(
                session, "Bench", "bench@example.test", "password-123"
            )
            project, _ = create_project(session, org.id, "Shop")
            org_id, project_id, slug = org.id, project.id, project.slug
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        server = uvicorn.Server(
            uvicorn.Config(create_app(settings), host="127.0.0.1", port=port, log_level="warning")
        )
        threading.Thread(target=server.run, daemon=True).start()
        while not server.started:
            time.sleep(0.05)
        url = f"http://127.0.0.1:{port}"

        small = work / "small"
        small.mkdir()
        lines, tokens = make_build(small, "app.min.js", int(args.map_mb * 1024 * 1024), seed=1)
        map_size = (small / "app.min.js.map").stat().st_size
        upload_small = upload(url, api_key, slug, "shop@1.0.0", small)

        client = get_warehouse(settings)
        payload = {
            "platform": "javascript",
            "release": "shop@1.0.0",
            "exception": {"values": [{"type": "TypeError", "value": "x", "stacktrace": {"frames": stack(lines, args.frames)}}]},
        }  # fmt: skip
        resolver = Resolver(client, org_id, project_id, MapCache())

        def once() -> tuple[float, int]:
            chain = exceptions(payload)
            start = time.perf_counter()
            mapped = symbolicate(resolver, payload, chain)
            return (time.perf_counter() - start) * 1000, mapped

        cold, mapped = once()
        if args.profile:
            import cProfile
            import pstats

            with cProfile.Profile() as profile:
                once()
            pstats.Stats(profile).sort_stats("cumulative").print_stats(15)
        warm = sorted(once()[0] for _ in range(args.runs))
        queries = []
        for _ in range(args.runs):
            start = time.perf_counter()
            candidate_files(client, org_id, project_id, "shop@1.0.0", "", [])
            queries.append((time.perf_counter() - start) * 1000)
        print(
            f"map: {map_size / 1e6:.1f} MB, {tokens:,} tokens over {lines} lines; uploaded in {upload_small:.2f} s"
        )
        print(f"symbolicate {args.frames} frames ({mapped} mapped): first (parse + cache) {cold:.0f} ms")
        print(
            f"symbolicate {args.frames} frames, cached: median {statistics.median(warm):.1f} ms, "
            f"p95 {warm[int(len(warm) * 0.95) - 1]:.1f} ms, max {warm[-1]:.1f} ms (goal <= 50 ms); "
            f"(the uncached manifest query alone: median {statistics.median(queries):.1f} ms)"
        )

        big = work / "big"
        big.mkdir()
        # Four entry points; each map about 64 % of its pair (the minified file is the rest).
        per_map = args.upload_mb / 4 * 0.64
        for i in range(4):
            make_build(big, f"entry{i}.min.js", int(per_map * 1024 * 1024), seed=10 + i)
        total = sum(p.stat().st_size for p in big.iterdir())
        seconds = upload(url, api_key, slug, "shop@2.0.0", big)
        print(
            f"upload {total / 1e6:.1f} MB (4 maps + minified files) end to end: {seconds:.2f} s (goal <= 10 s)"
        )
        server.should_exit = True
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
