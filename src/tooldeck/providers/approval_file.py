"""Where an ``ApprovalStore`` keeps its approvals: in memory, or in one SQLite file.

The file (``<data_dir>/approvals.db``) is what lets a person approve, from a terminal
(``tooldeck approvals``) or another server process, a call that a stdio MCP session
asked for; and what keeps pending approvals over a restart. Every operation is one
``BEGIN IMMEDIATE`` transaction that reads the table, changes it and writes the rows
that changed, so two processes never decide the same approval twice. Approvals are
few (pending ones, and decided ones until they expire), so reading them all is cheap.

Whoever can write the file can approve anything, so it is created ``0600`` in a
``0700`` folder, and a file or folder that another user owns or may write is refused.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import sqlite3
import stat
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tooldeck.core.confirmation import ConfirmationDecision, ConfirmationRequest
from tooldeck.exceptions import ConfigError

if TYPE_CHECKING:
    from tooldeck.providers.approvals import Approval

__all__ = ["ApprovalFile", "ApprovalMemory"]


class ApprovalMemory:
    """Approvals in this process only (the default for an ``ApprovalStore`` without a path)."""

    shared = False
    """Whether another process may change the approvals (then waiters poll)."""

    def __init__(self) -> None:
        self._items: dict[str, Approval] = {}
        self._lock = threading.Lock()

    @contextlib.contextmanager
    def transaction(self) -> Iterator[dict[str, Approval]]:
        """The approvals by id, to read and change in place."""
        with self._lock:
            yield self._items


class ApprovalFile:
    """Approvals in a SQLite file shared by every process of one data dir.

    Args:
        path: The database file; its folder is created ``0700`` when missing.

    Raises:
        ConfigError: the file or its folder is owned by another user or writable by
            group or others (anyone who can write it could approve calls), or the file
            is not a SQLite database.
    """

    shared = True
    """Whether another process may change the approvals (then waiters poll)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        _check_private(path.parent)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        os.close(fd)
        _check_private(path)
        self._lock = threading.Lock()
        try:
            self._db = sqlite3.connect(
                path, timeout=30.0, isolation_level=None, check_same_thread=False
            )
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS approvals (id TEXT PRIMARY KEY, body TEXT NOT NULL)"
            )
        except sqlite3.DatabaseError as exc:
            raise ConfigError(f"cannot open the approval store {path}: {exc}") from None

    @contextlib.contextmanager
    def transaction(self) -> Iterator[dict[str, Approval]]:
        """The approvals by id, read in one write transaction; changes are written back.

        A row that cannot be read (written by a newer version, or damaged) is left as
        it is and not shown.
        """
        with self._lock:
            db = self._db
            db.execute("BEGIN IMMEDIATE")
            try:
                stored = dict(db.execute("SELECT id, body FROM approvals").fetchall())
                items, unreadable = {}, set()
                for approval_id, body in stored.items():
                    try:
                        items[approval_id] = _load(body)
                    except (ValueError, TypeError, KeyError):
                        unreadable.add(approval_id)
                yield items
                for approval_id, approval in items.items():
                    body = _dump(approval)
                    if stored.get(approval_id) != body:
                        db.execute(
                            "INSERT OR REPLACE INTO approvals (id, body) VALUES (?, ?)",
                            (approval_id, body),
                        )
                gone = [(i,) for i in stored if i not in items and i not in unreadable]
                db.executemany("DELETE FROM approvals WHERE id = ?", gone)
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise

    def close(self) -> None:
        """Close the database connection."""
        with self._lock:
            self._db.close()


def _check_private(path: Path) -> None:
    info = path.stat()
    if hasattr(os, "getuid") and info.st_uid != os.getuid():
        raise ConfigError(
            f"the approval store {path} belongs to another user (uid {info.st_uid}); "
            "whoever can write it can approve calls: use a data_dir of your own"
        )
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise ConfigError(
            f"the approval store {path} may be written by group or others "
            f"(mode {stat.filemode(info.st_mode)}); whoever can write it can approve "
            f"calls: chmod go-w {path}"
        )


def _dump(approval: Approval) -> str:
    body = dataclasses.asdict(approval)
    return json.dumps(body, sort_keys=True, separators=(",", ":"))


def _load(body: str) -> Approval:
    from tooldeck.providers.approvals import Approval

    data: dict[str, Any] = json.loads(body)
    decision = data.pop("decision")
    return Approval(
        request=ConfirmationRequest(**data.pop("request")),
        decision=None if decision is None else ConfirmationDecision(**decision),
        **data,
    )
