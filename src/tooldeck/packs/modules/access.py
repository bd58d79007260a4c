"""Who may change modules: ``[packs.modules] admins`` (issue 28: another user of the server).

Installed code runs in the server for every user, so writing, validating, installing,
rolling back and removing modules is for the admins only: by default ``anonymous``,
the single user of a server without identities. Behind a proxy that names users
(``[server] trust_user_header``) a user who is not an admin may list the modules and
store their own module keys, nothing else: otherwise they could approve the install of
their own code, which then runs for everyone.
"""

from __future__ import annotations

from collections.abc import Collection

from tooldeck.core.context import ToolContext, principal_of
from tooldeck.exceptions import ToolDeniedError

__all__ = ["require_admin"]


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
