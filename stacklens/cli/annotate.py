"""`stacklens annotate`: post an annotation (a deploy, a flag flip) to the running server from CI — the server
``--url`` or ``STACKLENS_URL``, the organization API key ``--api-key`` or ``STACKLENS_API_KEY``. The time
charts draw it beside the releases' first-seen markers.

    stacklens annotate "deploy api 4f2c1a" --tags deploy,api --project web --release shop@1.4.0
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import httpx

DEFAULT_URL = "http://127.0.0.1:8000"


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser("annotate", help="post an annotation (a deploy from CI) for the time charts")
    p.add_argument("text", help="what happened, e.g. 'deploy api 4f2c1a'")
    p.add_argument("--tags", default="", help="comma-separated tags, e.g. deploy,api")
    p.add_argument("--project", default="", help="project slug (default: the whole organization)")
    p.add_argument("--release", default="", help="the release it concerns, e.g. shop@1.4.0")
    p.add_argument("--time", default="", help="ISO 8601 time (default now)")
    p.add_argument(
        "--url", default=None, help=f"the StackLens server (default $STACKLENS_URL or {DEFAULT_URL})"
    )
    p.add_argument("--api-key", default=None, help="organization API key (default $STACKLENS_API_KEY)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from stacklens.cli.main import CliError

    url = (args.url or os.environ.get("STACKLENS_URL") or DEFAULT_URL).rstrip("/")
    key = args.api_key or os.environ.get("STACKLENS_API_KEY") or ""
    if not key:
        raise CliError("give the organization API key with --api-key or STACKLENS_API_KEY")
    body = {
        "text": args.text,
        "tags": [t.strip() for t in args.tags.split(",") if t.strip()],
        "project": args.project,
        "release": args.release,
    }
    if args.time:
        body["time"] = args.time
    try:
        response = httpx.post(
            f"{url}/api/annotations", json=body, headers={"Authorization": f"Bearer {key}"}, timeout=30
        )
    except httpx.HTTPError as exc:
        raise CliError(f"cannot reach the StackLens server at {url}: {exc}") from None
    if response.status_code >= 400:
        try:
            detail = response.json().get("detail", "")
        except ValueError:
            detail = response.text[:200]
        raise CliError(f"HTTP {response.status_code}: {detail}")
    sys.stdout.write(json.dumps(response.json()) + "\n")
    return 0
