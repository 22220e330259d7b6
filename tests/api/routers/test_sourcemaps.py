"""Source-map uploads over HTTP: the real sentry-cli binary and `stacklens sourcemaps upload` against a real
server, the bundle list and delete, and bad uploads refused whole with a clear reason."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import subprocess
import zipfile
from pathlib import Path
from typing import Any

import httpx
import pytest

from stacklens.cli.main import main
from tests.stacklens.sourcemaps.app_bundle import build_app, sentry_cli


def _bundles(server: str, org: dict[str, Any]) -> list[dict[str, Any]]:
    response = httpx.get(
        f"{server}/api/projects/{org['project']}/sourcemaps",
        headers={"Authorization": f"Bearer {org['api_key']}"},
    )
    assert response.status_code == 200, response.text
    return list(response.json()["bundles"])


def _sentry_cli_upload(
    server: str, org: dict[str, Any], dist: Path, release: str
) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "SENTRY_URL": server,
        "SENTRY_AUTH_TOKEN": str(org["api_key"]),
        "SENTRY_LOG_LEVEL": "info",
    }
    return subprocess.run(
        [str(sentry_cli()), "sourcemaps", "upload", "--org", "-", "--project", str(org["project"]),
         "--release", release, str(dist)],
        capture_output=True, text=True, timeout=120, env=env,
    )  # fmt: skip


def test_sentry_cli_uploads_a_bundle_listed_once(dsn_server: str, make_org, tmp_path: Path) -> None:
    org = make_org()
    dist = build_app(tmp_path, inject=True)
    debug_id = (dist / "app.min.js").read_text().rsplit("debugId=", 1)[1].strip()
    result = _sentry_cli_upload(dsn_server, org, dist, "web@1.0.0")
    assert result.returncode == 0, result.stderr + result.stdout
    again = _sentry_cli_upload(dsn_server, org, dist, "web@1.0.0")  # the same build: recognised, not doubled
    assert again.returncode == 0, again.stderr + again.stdout
    (bundle,) = _bundles(dsn_server, org)
    assert bundle["release"] == "web@1.0.0" and bundle["debug_ids"] == [debug_id]
    urls = {f["url"]: f for f in bundle["files"]}
    assert set(urls) == {"~/app.min.js", "~/app.min.js.map"}
    assert urls["~/app.min.js.map"]["type"] == "source_map"
    # sentry-cli rewrites the map as it bundles it (sources made relative), so its size is near the file's.
    assert abs(urls["~/app.min.js.map"]["size"] - (dist / "app.min.js.map").stat().st_size) < 100

    other = make_org("Other Org", email="other@example.test")
    response = httpx.delete(
        f"{dsn_server}/api/projects/{org['project']}/sourcemaps/{bundle['bundle_id']}",
        headers={"Authorization": f"Bearer {other['api_key']}"},
    )
    assert response.status_code == 404  # another organization's project is not there for this key
    response = httpx.delete(
        f"{dsn_server}/api/projects/{org['project']}/sourcemaps/{bundle['bundle_id']}",
        headers={"Authorization": f"Bearer {org['api_key']}"},
    )
    assert response.status_code == 204
    assert _bundles(dsn_server, org) == []


def test_our_cli_uploads_the_same_kind_of_bundle(
    dsn_server: str, make_org, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    org = make_org()
    dist = build_app(tmp_path)
    code = main(
        ["sourcemaps", "upload", "--project", str(org["project"]), "--release", "web@2.0.0", "--dist", "d1",
         "--url", dsn_server, "--api-key", str(org["api_key"]), str(dist)]
    )  # fmt: skip
    assert code == 0, capsys.readouterr().err
    assert "uploaded 2 files" in capsys.readouterr().out
    (bundle,) = _bundles(dsn_server, org)
    assert (bundle["release"], bundle["dist"]) == ("web@2.0.0", "d1")
    minified = next(f for f in bundle["files"] if f["url"] == "~/app.min.js")
    assert minified["type"] == "minified_source"


def _zip(files: dict[str, bytes], manifest: dict[str, Any]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, content in files.items():
            archive.writestr(name, content)
        archive.writestr("manifest.json", json.dumps(manifest))
    return buffer.getvalue()


def _send(server: str, org: dict[str, Any], data: bytes) -> dict[str, Any]:
    """Upload ``data`` as one bundle the way sentry-cli does; the assemble answer."""
    headers = {"Authorization": f"Bearer {org['api_key']}"}
    sha1 = hashlib.sha1(data).hexdigest()
    body = {"checksum": sha1, "chunks": [sha1], "projects": [org["project"]], "version": "web@3.0.0"}
    base = f"{server}/api/0/organizations/-"
    first = httpx.post(f"{base}/artifactbundle/assemble/", json=body, headers=headers).json()
    assert first["state"] == "not_found" and first["missingChunks"] == [sha1]
    files = {"file_gzip": (sha1, gzip.compress(data), "application/octet-stream")}
    assert httpx.post(f"{base}/chunk-upload/", files=files, headers=headers).status_code == 200
    return dict(httpx.post(f"{base}/artifactbundle/assemble/", json=body, headers=headers).json())


def _manifest(extra: dict[str, Any] | None = None) -> dict[str, Any]:
    files = {
        "files/_/_/app.min.js": {"type": "minified_source", "url": "~/app.min.js", "headers": {"sourcemap": "app.min.js.map"}},
        "files/_/_/app.min.js.map": {"type": "source_map", "url": "~/app.min.js.map", "headers": {}},
    }  # fmt: skip
    return {"files": files, "release": "web@3.0.0", **(extra or {})}


def test_bad_uploads_are_refused_whole(dsn_server: str, make_org, tmp_path: Path) -> None:
    org = make_org()
    dist = build_app(tmp_path)
    minified, good_map = (dist / "app.min.js").read_bytes(), (dist / "app.min.js.map").read_bytes()
    headers = {"Authorization": f"Bearer {org['api_key']}"}
    base = f"{dsn_server}/api/0/organizations/-"

    corrupt = _zip(
        {"files/_/_/app.min.js": minified, "files/_/_/app.min.js.map": good_map[:-40]}, _manifest()
    )
    answer = _send(dsn_server, org, corrupt)
    assert answer["state"] == "error" and "app.min.js.map is not a valid source map" in answer["detail"]

    other = json.loads(good_map)
    other["file"] = "vendor.min.js"
    wrong = _zip(
        {"files/_/_/app.min.js": minified, "files/_/_/app.min.js.map": json.dumps(other).encode()},
        _manifest(),
    )
    answer = _send(dsn_server, org, wrong)
    assert answer["state"] == "error" and "is a map for another file" in answer["detail"], answer

    files = {"file": ("0" * 40, b"these bytes do not hash to zeros", "application/octet-stream")}
    response = httpx.post(f"{base}/chunk-upload/", files=files, headers=headers)
    assert response.status_code == 400 and "does not match its content" in response.json()["detail"]

    big = os.urandom(33 * 1024 * 1024)
    files = {"file": (hashlib.sha1(big).hexdigest(), big, "application/octet-stream")}
    response = httpx.post(f"{base}/chunk-upload/", files=files, headers=headers, timeout=60)
    assert response.status_code == 413 and "at most" in response.json()["detail"]

    assert _bundles(dsn_server, org) == []  # nothing half stored
    options = httpx.get(f"{base}/chunk-upload/", headers=headers).json()
    assert options["chunkSize"] & (options["chunkSize"] - 1) == 0 and "artifact_bundles" in options["accept"]
    assert (
        httpx.get(f"{dsn_server}/api/0/organizations/elsewhere/chunk-upload/", headers=headers).status_code
        == 404
    )
