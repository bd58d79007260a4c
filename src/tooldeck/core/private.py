"""Files and folders only this user may change (or, for a secret, read).

One check for every file whose writer decides something: the approval store (whoever
writes it approves calls), the audit journal (whoever writes it adds calls to the
record), the credential store and its key (whoever reads them has the secrets).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

__all__ = ["not_private"]


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
