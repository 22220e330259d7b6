"""`GET /api/health`: overall status for load balancers; component detail with a valid key."""

from __future__ import annotations

from fastapi import APIRouter

router = APIRouter(prefix="/api", tags=["health"])


@router.get("/health")
def health() -> dict[str, str]:
    """Overall status. (Component detail arrives with the control store and warehouse checks.)"""
    return {"status": "ok"}
