"""An upstream MCP server with a session per user, each started with that user's token.

``[mcp_servers.github] per_user = true`` with ``credential = "mcp:github"``: a caller
with an identity (``ToolContext.user``) is served by a session of their own, opened with
their own stored secret the first time they call; the server's own session (its own
user's secret, principal ``anonymous``) lists the tools and serves callers without an
identity. A caller who stored no secret gets ``unavailable`` saying how to store it,
never another user's session. At most ``MAX_SESSIONS`` user sessions stay open; the
least recently used is closed first.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Callable

from tooldeck.core.context import ANONYMOUS, ToolContext, principal_of
from tooldeck.core.credentials import CredentialStore
from tooldeck.core.result import ToolResult
from tooldeck.core.tool import Arguments
from tooldeck.providers.mcp import MCPToolsProvider
from tooldeck.providers.mcp_config import MCPServerConfig

__all__ = ["MAX_SESSIONS", "PerUserMCPToolsProvider"]

MAX_SESSIONS = 32
"""User sessions kept open at once (each a process, for a stdio server)."""


class PerUserMCPToolsProvider(MCPToolsProvider):
    """``MCPToolsProvider`` whose calls go to the caller's own session (module docstring).

    Args:
        server_id: The server's id in configuration.
        config: How to reach it (``per_user`` with a ``credential``).
        credentials: Opens the credential store.
    """

    def __init__(
        self,
        server_id: str,
        config: MCPServerConfig,
        *,
        credentials: Callable[[], CredentialStore] | None = None,
    ) -> None:
        super().__init__(server_id, config, credentials=credentials)
        self._sessions: OrderedDict[str, MCPToolsProvider] = OrderedDict()

    async def execute(
        self, name: str, arguments: Arguments = None, ctx: ToolContext | None = None
    ) -> ToolResult:
        """Call ``name`` in the caller's own session; never raises for tool failures."""
        principal = principal_of(ctx) if ctx is not None else ANONYMOUS
        if principal == ANONYMOUS:
            return await super().execute(name, arguments, ctx)
        session = self._sessions.get(principal)
        if session is None:
            session = MCPToolsProvider(
                self.id, self.config, credentials=self._credentials, principal=principal
            )
            # the tools the server's own session listed, until this one lists its own
            session._tools, session._needs_tasks = self._tools, self._needs_tasks
            session._listed = self._listed
            self._sessions[principal] = session
            while len(self._sessions) > MAX_SESSIONS:
                _, oldest = self._sessions.popitem(last=False)
                await oldest.close()
        self._sessions.move_to_end(principal)
        return await session.execute(name, arguments, ctx)

    async def close(self) -> None:
        """Close every user's session, then the server's own."""
        sessions, self._sessions = list(self._sessions.values()), OrderedDict()
        await asyncio.gather(*(s.close() for s in sessions), return_exceptions=True)
        await super().close()
