"""The demo shop's alert inbox: the receiving end of the demo's webhook channel.

``POST /webhooks/stacklens`` verifies the Standard Webhooks signature with the channel's secret (the demo
writes it to a 0600 file beside its logs), keeps each ``webhook-id`` once — a resend after a crash is
acknowledged and not counted again — and ``GET /webhooks/stacklens`` lists what arrived, newest first.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import threading
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from demo.alerts import INBOX_PATH

KEEP = 200


def verify(secret: str, headers: dict[str, str], body: bytes) -> bool:
    key = base64.b64decode(secret.removeprefix("whsec_"))
    signed = f"{headers.get('webhook-id', '')}.{headers.get('webhook-timestamp', '')}.".encode() + body
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    given = [s.split(",", 1)[1] for s in headers.get("webhook-signature", "").split() if s.startswith("v1,")]
    return any(hmac.compare_digest(expected, g) for g in given)


def inbox_router(secret_file: Path | None) -> APIRouter:
    router = APIRouter()
    seen: dict[str, dict[str, Any]] = {}
    lock = threading.Lock()

    @router.post(INBOX_PATH)
    async def receive(request: Request) -> JSONResponse:
        body = await request.body()
        headers = {k.lower(): v for k, v in request.headers.items()}
        if (
            secret_file is not None
            and secret_file.exists()
            and not verify(secret_file.read_text().strip(), headers, body)
        ):
            return JSONResponse({"error": "bad signature"}, status_code=401)
        try:
            message = json.loads(body)
        except ValueError:
            return JSONResponse({"error": "body is not JSON"}, status_code=400)
        msg_id = headers.get("webhook-id") or str(message.get("id", ""))
        with lock:
            duplicate = msg_id in seen
            if not duplicate:
                data = message.get("data", {}) if isinstance(message, dict) else {}
                seen[msg_id] = {
                    "id": msg_id,
                    "type": message.get("type"),
                    "subject": data.get("subject"),
                    "link": data.get("link"),
                }
                while len(seen) > KEEP:
                    seen.pop(next(iter(seen)))
        return JSONResponse({"ok": True, "duplicate": duplicate})

    @router.get(INBOX_PATH)
    def listing() -> dict[str, Any]:
        with lock:
            return {"received": list(reversed(seen.values()))}

    return router
