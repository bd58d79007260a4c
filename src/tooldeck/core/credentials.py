"""The credential store's interface: secrets per (principal, scope), never shown.

A tool that needs a user's API key (a module, a statement source, an upstream MCP
server's token) asks the ``CredentialStore`` in its context's services for the
caller's own (``core.context.principal_of``), never another principal's. The store returns
``pydantic.SecretStr``, whose ``repr`` and ``str`` print ``**********``, so a secret
that reaches a log line, an error message or a result by accident stays hidden; the
tool calls ``get_secret_value()`` at the one place it sends it.

The implementation (``providers.credentials.EncryptedCredentialStore``) keeps them
encrypted in the data directory (ARCHITECTURE.md: embedded defaults).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from pydantic import SecretStr

__all__ = ["CredentialInfo", "CredentialStore"]


@dataclass(frozen=True, kw_only=True)
class CredentialInfo:
    """What may be shown about a stored credential: never its value."""

    principal: str
    """Whose it is (``ToolContext.user``; ``anonymous`` on a server without identities)."""
    scope: str
    """What it is for: a module id, a source name, ``mcp:<server>``."""
    updated_at: datetime
    """When it was last stored (UTC)."""


class CredentialStore(Protocol):
    """Secrets per (principal, scope).

    Semantics:
        ``put`` replaces what was stored for (principal, scope). ``get`` returns None
        when nothing is stored; it never falls back to another principal's secret.
        Errors name the principal and scope, never the value.
    """

    def put(self, principal: str, scope: str, secret: str) -> None:
        """Store ``secret`` for (principal, scope)."""
        ...

    def get(self, principal: str, scope: str) -> SecretStr | None:
        """The secret of (principal, scope), or None."""
        ...

    def delete(self, principal: str, scope: str) -> bool:
        """Forget (principal, scope); whether there was anything to forget."""
        ...

    def scopes(self, principal: str) -> list[CredentialInfo]:
        """What ``principal`` has stored, without the values, by scope."""
        ...
