"""Who may change modules: ``[packs.modules] admins`` (issue 28: another user of the server).

Installed code runs (in the sandbox) for every user who calls it, so writing, validating, installing,
rolling back and removing modules is for the admins only: by default ``anonymous``,
the single user of a server without identities. Behind a proxy that names users
(``[server] trust_user_header``) a user who is not an admin may list the modules and
store their own module keys, nothing else: otherwise they could approve the install of
their own code, which then runs for everyone.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import Any

from pydantic import BaseModel

from tooldeck.core.composite import ActionStrategy, CompositeTool
from tooldeck.core.context import ANONYMOUS, ToolContext, principal_of
from tooldeck.exceptions import ToolDeniedError
from tooldeck.packs.modules.versions import ModuleVersions

__all__ = ["ModulesTool", "require_admin"]


def require_admin(ctx: ToolContext, admins: Collection[str], what: str) -> None:
    """Refuse ``what`` unless the caller is one of ``admins``.

    Raises:
        ToolDeniedError: the caller is not an admin; the message says who may.
    """
    principal = principal_of(ctx)
    if principal not in admins:
        raise ToolDeniedError(
            f"{what} is for the module admins ([packs.modules] admins); {principal!r} is not "
            "one: ask an admin, or use list and store_credentials"
        )


class ModulesTool(CompositeTool):
    """What ``module_admin`` and ``module_pipeline`` share: versions, admins, reloads.

    The modules on disk, who may change them, and telling the runtime that what is
    active changed. An action runs for an admin only, unless its strategy sets ``open_to_all``.

    Args:
        versions: The modules on disk.
        strategies: The tool's actions.
        on_change: Called after an install, rollback, enable, disable or uninstall (the
            runtime reloads the modules); None: the change shows at the next start.
        admins: Who may run the actions that change modules.
    """

    def __init__(
        self,
        versions: ModuleVersions,
        strategies: Sequence[ActionStrategy],
        on_change: Callable[[], None] | None = None,
        admins: Collection[str] = (ANONYMOUS,),
    ) -> None:
        self.versions = versions
        self.on_change = on_change
        self.admins = frozenset(admins)
        super().__init__(strategies)

    async def execute_internal(
        self, request: tuple[ActionStrategy, BaseModel], ctx: ToolContext
    ) -> Any:
        """Run the action, after ``require_admin`` unless it is open to all."""
        strategy = request[0]
        if not getattr(strategy, "open_to_all", False):
            require_admin(ctx, self.admins, f"{self.name} {strategy.name}")
        return await super().execute_internal(request, ctx)

    def changed(self) -> None:
        """Tell the runtime that what is active changed."""
        if self.on_change is not None:
            self.on_change()
