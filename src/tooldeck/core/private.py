"""Files and folders only this user may change (or, for a secret, read).

One check for every file whose writer decides something: the approval store (whoever
writes it approves calls), the audit journal (whoever writes it adds calls to the
record), the credential store and its key (whoever reads them has the secrets).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from tooldeck.exceptions import ConfigError

__all__ = ["not_private", "private_file"]


def not_private(path: Path, *, secret: bool = False) -> str | None:
    """Why another user could change ``path`` (a file or folder), or None when only we can.

    Private: owned by this user, and writable by neither group nor others; with
    ``secret``, not readable by them either. Without POSIX owners (Windows) only the
    mode is checked.

    Raises:
        OSError: ``path`` cannot be read.
    """
    info = path.stat()
    if hasattr(os, "getuid") and info.st_uid != os.getuid():
        return f"belongs to another user (uid {info.st_uid})"
    if secret and info.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        return f"may be read or changed by group or others (mode {stat.filemode(info.st_mode)})"
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"may be written by group or others (mode {stat.filemode(info.st_mode)})"
    return None


def private_file(path: Path, what: str, risk: str) -> None:
    """Create ``path`` (``0600``, in a ``0700`` folder) unless it exists; refuse it if not private.

    For a store whose writer decides something (``what``: "the approval store"; ``risk``:
    what a writer could do, e.g. "whoever can write it can approve calls").

    Raises:
        ConfigError: the file or its folder is another user's or writable by group or
            others; the message names the path, the risk and the fix.
    """
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    _require_private(path.parent, what, risk)
    os.close(os.open(path, os.O_RDWR | os.O_CREAT, 0o600))
    _require_private(path, what, risk)


def _require_private(path: Path, what: str, risk: str) -> None:
    why = not_private(path)
    if why is None:
        return
    fix = "chmod go-w " + str(path) if "mode" in why else "use a data_dir of your own"
    raise ConfigError(f"{what} {path} {why}; {risk}: {fix}")
