"""The SQLite files stores keep in the data dir: opened private, written one transaction at a time.

The approval, receipt and schedule stores each hold one such file, shared by every
process of a data dir. WAL with ``synchronous=NORMAL``: a commit survives the process
being killed (not a power loss), without an fsync per commit.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from pathlib import Path

from tooldeck.core.private import private_file
from tooldeck.exceptions import ConfigError

__all__ = ["connect", "immediate", "open_private_db"]


def connect(path: Path, timeout: float = 30.0) -> sqlite3.Connection:
    """A connection to ``path`` in autocommit mode, usable from any thread.

    Args:
        path: The database file.
        timeout: Seconds to wait for another writer's lock (0: fail at once).
    """
    db = sqlite3.connect(path, timeout=timeout, isolation_level=None, check_same_thread=False)
    db.execute("PRAGMA synchronous=NORMAL")  # per connection: FULL would fsync every commit
    return db


def open_private_db(path: Path, what: str, risk: str, schema: str) -> sqlite3.Connection:
    """Create or open the store ``what`` at ``path`` (``0600`` in a ``0700`` folder), ``schema`` run.

    Raises:
        ConfigError: the file or folder is another user's or writable by others
            (``private_file``: ``risk`` says what a writer could do), or the file is not
            a SQLite database.
    """
    private_file(path, what, risk)
    try:
        db = connect(path)
        db.executescript(schema)
    except sqlite3.DatabaseError as exc:
        raise ConfigError(f"cannot open {what} {path}: {exc}") from None
    return db


@contextlib.contextmanager
def immediate(db: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """One ``BEGIN IMMEDIATE`` transaction: committed when the block ends, rolled back if it raises.

    Taking the write lock first means two processes never both read, then both write.
    """
    db.execute("BEGIN IMMEDIATE")
    try:
        yield db
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")
