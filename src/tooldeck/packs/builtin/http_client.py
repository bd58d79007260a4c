"""The HTTP client a built-in tool uses for one call."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx

from tooldeck.core.context import ToolContext

__all__ = ["http_client"]


@asynccontextmanager
async def http_client(ctx: ToolContext) -> AsyncIterator[httpx.AsyncClient]:
    """The client for one call: the runtime's shared one, else one of its own.

    The shared ``httpx.AsyncClient`` comes from ``ctx.services`` and pools connections
    across calls; without it a client is opened and closed for this call only.
    """
    shared = ctx.services.get_optional(httpx.AsyncClient)
    if shared is not None:
        yield shared
        return
    async with httpx.AsyncClient() as own:
        yield own
