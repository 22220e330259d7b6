"""`stacklens sourcemaps upload --project SLUG --release R [--dist D] PATH…`: upload minified files and maps.

For teams without sentry-cli. It packs the same artifact bundle sentry-cli would, checks it before sending
(a corrupt map or a map for another file is refused here, naming the file), and speaks the same protocol to
the server: chunk settings, assemble (which answers the missing chunks), chunks, assemble again. The server
is ``--url`` (or ``STACKLENS_URL``) and the key ``--api-key`` (or ``STACKLENS_API_KEY``, an organization API
key).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from stacklens.cli.main import CliError

DEFAULT_URL = "http://127.0.0.1:8000"


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
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
    from stacklens.sourcemaps.client import send_bundle
    from stacklens.sourcemaps.packing import bundle_of

    url = (args.url or os.environ.get("STACKLENS_URL") or DEFAULT_URL).rstrip("/")
    key = args.api_key or os.environ.get("STACKLENS_API_KEY") or ""
    if not key:
        raise CliError("--api-key (or STACKLENS_API_KEY) is required: an organization API key")
    bundle = bundle_of(list(args.paths), args.release, args.dist, args.url_prefix)
    bundle_id = send_bundle(url, key, args.project, bundle, args.org)
    total = sum(len(f.content) for f in bundle.files)
    print(
        f"uploaded {len(bundle.files)} files ({total:,} bytes) to {args.project} release {args.release}"
        + (f" dist {args.dist}" if args.dist else "")
        + f"; bundle {bundle_id}"
    )
    for item in bundle.files:
        debug = f"  debug id {item.debug_id}" if item.debug_id else ""
        print(f"  {item.url}  ({item.file_type}){debug}")
    return 0
