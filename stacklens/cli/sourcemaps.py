"""`stacklens sourcemaps upload --project SLUG --release R [--dist D] PATH…`: upload minified files and maps.

For teams without sentry-cli. It packs the same artifact bundle sentry-cli would, checks it before sending
(a corrupt map or a map for another file is refused here, naming the file), and speaks the same protocol to
the server: chunk settings, assemble (which answers the missing chunks), chunks, assemble again. The server
is ``--url`` (or ``STACKLENS_URL``) and the key ``--api-key`` (or ``STACKLENS_API_KEY``, an organization API
key). Talking to the configured StackLens server is not a call to the outside, so it uses httpx directly.
"""

from __future__ import annotations

import argparse
import gzip
import io
import os
import time
from pathlib import Path
from typing import Any

from stacklens.cli.main import CliError

DEFAULT_URL = "http://127.0.0.1:8000"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "sourcemaps", help="upload source maps so minified frames show original lines"
    )
    commands = parser.add_subparsers(dest="sourcemaps_command", metavar="ACTION", required=True)
    p = commands.add_parser("upload", help="upload minified .js files and their .map files")
    p.add_argument("paths", nargs="+", metavar="PATH", type=Path, help="files or build folders (e.g. dist/)")
    p.add_argument("--project", required=True, help="project slug")
    p.add_argument("--release", required=True, help="the release the files belong to (as the SDK sends it)")
    p.add_argument("--dist", default="", help="the distribution, when the SDK sends one")
    p.add_argument("--url-prefix", default="~/", help="prefix of the files' URLs (default ~/, any host)")
    p.add_argument(
        "--url", default=None, help=f"the StackLens server (default $STACKLENS_URL or {DEFAULT_URL})"
    )
    p.add_argument("--api-key", default=None, help="organization API key (default $STACKLENS_API_KEY)")
    p.add_argument("--org", default="-", help="organization slug (default: the API key's organization)")
    p.set_defaults(func=_upload)


def _upload(args: argparse.Namespace) -> int:
    import httpx

    from stacklens.sourcemaps.packing import bundle_of, pack
    from stacklens.sourcemaps.store import sha1_hex

    url = (args.url or os.environ.get("STACKLENS_URL") or DEFAULT_URL).rstrip("/")
    key = args.api_key or os.environ.get("STACKLENS_API_KEY") or ""
    if not key:
        raise CliError("--api-key (or STACKLENS_API_KEY) is required: an organization API key")
    bundle = bundle_of(list(args.paths), args.release, args.dist, args.url_prefix)
    data = pack(bundle, project=args.project)
    base = f"{url}/api/0/organizations/{args.org}"
    with httpx.Client(headers={"Authorization": f"Bearer {key}"}, timeout=120) as http:
        options = _json(http.get(f"{base}/chunk-upload/"))
        size = int(options.get("chunkSize") or 8 * 1024 * 1024)
        chunks = [data[i : i + size] for i in range(0, len(data), size)]
        named = {sha1_hex(c): c for c in chunks}
        request = {
            "checksum": sha1_hex(data),
            "chunks": [sha1_hex(c) for c in chunks],
            "projects": [args.project],
            "version": args.release,
            "dist": args.dist or None,
        }
        answer = _json(http.post(f"{base}/artifactbundle/assemble/", json=request))
        if answer.get("missingChunks"):
            for sha1 in answer["missingChunks"]:
                files = {
                    "file_gzip": (sha1, io.BytesIO(gzip.compress(named[sha1])), "application/octet-stream")
                }
                _json(http.post(str(options.get("url") or f"{base}/chunk-upload/"), files=files), empty=True)
            deadline = time.monotonic() + 120
            while True:
                answer = _json(http.post(f"{base}/artifactbundle/assemble/", json=request))
                if answer.get("state") in ("ok", "created", "error") or time.monotonic() > deadline:
                    break
                time.sleep(0.5)
    if answer.get("state") == "error":
        raise CliError(f"the server refused the bundle: {answer.get('detail')}")
    total = sum(len(f.content) for f in bundle.files)
    print(
        f"uploaded {len(bundle.files)} files ({total:,} bytes) to {args.project} release {args.release}"
        + (f" dist {args.dist}" if args.dist else "")
        + f"; bundle {request['checksum']}"
    )
    for item in bundle.files:
        debug = f"  debug id {item.debug_id}" if item.debug_id else ""
        print(f"  {item.url}  ({item.file_type}){debug}")
    return 0


def _json(response: Any, empty: bool = False) -> dict[str, Any]:
    if response.status_code >= 400:
        try:
            body = response.json()
            detail = body.get("detail") or body.get("error") or response.text
        except ValueError:
            detail = response.text[:300]
        raise CliError(f"the server answered {response.status_code}: {detail}")
    if empty and not response.content:
        return {}
    return dict(response.json())
