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

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

from pydantic import SecretStr

if TYPE_CHECKING:
    from tooldeck.core.context import ToolContext

__all__ = ["CallerSecret", "CredentialInfo", "CredentialStore", "caller_secret"]


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


@dataclass(frozen=True, slots=True)
class CallerSecret:
    """The calling user's secret for the running tool's own scope, as a service.

    An installed module's calls get this instead of the credential store: it reads one
    scope (``module:<id>``) for one principal (the caller), and nothing else. Tools read
    it with ``caller_secret(ctx)``.
    """

    read: Callable[[], SecretStr | None]
    """Reads the secret (None when the caller stored none)."""


def caller_secret(ctx: ToolContext) -> SecretStr | None:
    """The caller's secret for this tool's scope (a module's API key), or None.

    None also when the tool runs without one to offer (not an installed module, or
    during validation in the sandbox). Send it with ``get_secret_value()``, never log it.

    Example (a module's ``tools.py``)::

        @tool
        async def forecast(city: str = Field(examples=["Paris"]), ctx: ToolContext = None):
            key = caller_secret(ctx)
            if key is None:
                raise ToolFailure("store your key: module_admin store_credentials")
    """
    holder = ctx.services.get_optional(CallerSecret)
    return holder.read() if holder is not None else None
