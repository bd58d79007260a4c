"""``/api/context/sources``: the user's configured sources and their last fetch.

The UI's Sources page reads it; fetching goes through the ``user_context`` tool like
any call.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from pydantic import BaseModel

from tooldeck.packs.context.bridge import ContextBridge
from tooldeck.server.http import runtime_of

__all__ = ["router"]

router = APIRouter(prefix="/api/context", tags=["context"])


class Source(BaseModel):
    """A configured source, and how its last fetch went (None: not fetched yet)."""

    category: str
    platform: str
    source_id: str
    fetched_at: str | None = None
    ok: bool | None = None
    error: str | None = None
    records: int | None = None


@router.get("/sources", summary="Context sources", response_model=list[Source])
async def sources(request: Request) -> list[Source]:
    """Every configured source (empty when the context pack is off), with its last fetch."""
    bridge = runtime_of(request).services.get_optional(ContextBridge)
    if bridge is None:
        return []
    last: dict[str, Any] = {r.source_id: r for r in bridge.last_fetches()}
    out = []
    for adapter in bridge.adapters:
        source_id = f"context:{adapter.category}:{adapter.platform}"
        result = last.get(source_id)
        out.append(
            Source(
                category=adapter.category,
                platform=adapter.platform,
                source_id=source_id,
                fetched_at=result.fetched_at.isoformat(timespec="seconds") if result else None,
                ok=result.success if result else None,
                error=result.error if result else None,
                records=result.transformed_count if result else None,
            )
        )
    return out
