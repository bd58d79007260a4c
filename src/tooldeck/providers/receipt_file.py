"""Where side-effect receipts are kept: one SQLite file beside the audit (``receipts.db``).

A receipt is the record of one keyed call of a tool with side effects
(``providers.receipts``): written ``running`` before the tool runs, then ``done`` with
the call's result before the result goes back to the caller. Every process of one data
dir shares the file, so a retry that reaches another process (a restarted stdio MCP
server, a second ``tooldeck serve``) finds the receipt too.

The file holds results, which may be private, so it is created ``0600`` in a ``0700``
folder, and a file or folder another user owns or may write is refused.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

from tooldeck.core.local_db import connect, immediate, open_private_db

__all__ = ["Receipt", "ReceiptFile", "ReceiptStatus", "ReceiptStore", "StoreBusy", "receipt_of"]

ReceiptStatus = Literal["running", "done"]


class ReceiptStore(Protocol):
    """Where receipts live: ``ReceiptFile`` (SQLite) or ``PostgresReceipts``.

    Each operation takes ``wait``: False asks for an answer without waiting on a lock
    or the network, and a store that cannot give one raises ``StoreBusy`` (the caller
    then repeats it with ``wait=True`` in a worker thread). Failures of the store
    itself raise (``sqlite3.Error``, ``psycopg.Error``).
    """

    def begin(self, receipt: Receipt, *, wait: bool = True) -> Receipt | None:
        """Store ``receipt`` unless its key has one; None: stored, else the stored one."""
        ...

    def get(self, key: str, *, wait: bool = True) -> Receipt | None:
        """The receipt stored for ``key``, or None."""
        ...

    def extend(self, key: str, lease_until: float, *, wait: bool = True) -> None:
        """Move a running receipt's lease."""
        ...

    def finish(self, key: str, result: str, *, wait: bool = True) -> None:
        """Store the result and mark the receipt done."""
        ...

    def forget(self, key: str, *, wait: bool = True) -> None:
        """Delete the receipt of a call that did not run."""
        ...

    def close(self) -> None:
        """Release connections."""
        ...


class StoreBusy(Exception):
    """The store could not be used without waiting (``wait=False``): retry with waiting."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Receipt:
    """One keyed call of a tool with side effects, as stored."""

    key: str
    """The call's idempotency key (``receipts.call_key``: principal, the caller's key,
    tool and arguments, hashed)."""
    tool: str
    """Canonical name of the tool."""
    principal: str
    """Whose call it was."""
    request_id: str
    """The id of the call that ran (the first one)."""
    status: ReceiptStatus
    """``running`` until the result is stored, then ``done``."""
    started_at: float
    """Unix time (s) the call started."""
    lease_until: float
    """Unix time (s) until which a ``running`` call counts as alive; the running process
    extends it while the call lasts. Past it, the process ended mid-call."""
    result: str | None = None
    """The call's ``ToolResult`` as JSON, once ``done``."""

    def new_row(self) -> tuple[str, str, str, str, float, float]:
        """The values both stores insert for a new receipt, in their column order.

        Key, tool, principal, request id, start and lease; the status is ``running``
        and there is no result yet.
        """
        return (
            self.key,
            self.tool,
            self.principal,
            self.request_id,
            self.started_at,
            self.lease_until,
        )


class ReceiptFile:
    """Receipts in a SQLite file shared by every process of one data dir.

    Semantics:
        ``begin`` is one ``BEGIN IMMEDIATE`` transaction: it inserts a ``running``
        receipt unless one exists for the key, so of two processes beginning the same
        key exactly one owns it. Receipts started more than ``keep_s`` ago are deleted
        (at most once a minute). WAL with ``synchronous=NORMAL``: a stored receipt
        survives the process being killed (not a power loss), like the audit.

    Args:
        path: The database file; its folder is created ``0700`` when missing.
        keep_s: How long a receipt is kept, in seconds (a repeated key after that runs
            the call again).

    Raises:
        ConfigError: the file or folder is another user's or writable by group or
            others, or the file is not a SQLite database.
    """

    def __init__(self, path: Path, *, keep_s: float = 86_400.0) -> None:
        self.path = path
        self.keep_s = keep_s
        self._purged = 0.0
        risk = "whoever can write it can make a call look done"
        # one connection that waits for other writers, one that never does
        self._waiting = (
            open_private_db(path, "the receipt store", risk, _SCHEMA),
            threading.Lock(),
        )
        self._now = (connect(path, 0.0), threading.Lock())

    @contextlib.contextmanager
    def _connection(self, wait: bool) -> Iterator[sqlite3.Connection]:
        """The connection for ``wait``, held; ``StoreBusy`` instead of waiting when not ``wait``."""
        db, lock = self._waiting if wait else self._now
        if not lock.acquire(blocking=wait):
            raise StoreBusy
        try:
            yield db
        except sqlite3.OperationalError as exc:
            if not wait and "locked" in str(exc):
                raise StoreBusy from None
            raise
        finally:
            lock.release()

    def begin(self, receipt: Receipt, *, wait: bool = True) -> Receipt | None:
        """Store ``receipt`` (``running``) unless its key has one; None: stored, ours to run.

        Args:
            receipt: The receipt of the call about to run.
            wait: Wait for another writer of the file; False: raise ``StoreBusy``
                instead (so an event loop can try without blocking, then use a thread).

        Returns:
            None when ``receipt`` was stored, else the receipt already stored for the key.
        """
        now = receipt.started_at
        with self._connection(wait) as db, immediate(db):
            if now - self._purged > 60.0:
                db.execute("DELETE FROM receipts WHERE started_at < ?", (now - self.keep_s,))
                self._purged = now
            row = db.execute(_SELECT, (receipt.key,)).fetchone()
            if row is None:
                db.execute(_INSERT, receipt.new_row())
        return None if row is None else receipt_of(row)

    def get(self, key: str, *, wait: bool = True) -> Receipt | None:
        """The receipt stored for ``key``, or None (``wait`` as in ``begin``)."""
        with self._connection(wait) as db:
            row = db.execute(_SELECT, (key,)).fetchone()
        return None if row is None else receipt_of(row)

    def extend(self, key: str, lease_until: float, *, wait: bool = True) -> None:
        """Move a ``running`` receipt's lease to ``lease_until`` (its call is still alive)."""
        with self._connection(wait) as db:
            db.execute(
                "UPDATE receipts SET lease_until = ? WHERE key = ? AND status = 'running'",
                (lease_until, key),
            )

    def finish(self, key: str, result: str, *, wait: bool = True) -> None:
        """Store the call's result (JSON) and mark its receipt ``done``."""
        with self._connection(wait) as db:
            db.execute(
                "UPDATE receipts SET status = 'done', result = ? WHERE key = ?", (result, key)
            )

    def forget(self, key: str, *, wait: bool = True) -> None:
        """Delete the receipt of a call that did not run (so the key may run it later)."""
        with self._connection(wait) as db:
            db.execute("DELETE FROM receipts WHERE key = ?", (key,))

    def close(self) -> None:
        """Close the database connections."""
        for db, lock in (self._waiting, self._now):
            with lock:
                db.close()


_SCHEMA = """
PRAGMA journal_mode=WAL;
CREATE TABLE IF NOT EXISTS receipts (
    key TEXT PRIMARY KEY,
    tool TEXT NOT NULL,
    principal TEXT NOT NULL,
    request_id TEXT NOT NULL,
    status TEXT NOT NULL,
    started_at REAL NOT NULL,
    lease_until REAL NOT NULL,
    result TEXT
);
CREATE INDEX IF NOT EXISTS receipts_started ON receipts (started_at);
"""
_COLUMNS = "key, tool, principal, request_id, status, started_at, lease_until, result"
_SELECT = f"SELECT {_COLUMNS} FROM receipts WHERE key = ?"
_INSERT = (
    "INSERT INTO receipts (key, tool, principal, request_id, status, started_at, lease_until) "
    "VALUES (?, ?, ?, ?, 'running', ?, ?)"
)


def receipt_of(row: tuple[Any, ...]) -> Receipt:
    """A ``Receipt`` from a row of the columns both stores select, in ``Receipt``'s order."""
    key, tool, principal, request_id, status, started_at, lease_until, result = row
    return Receipt(
        key=key,
        tool=tool,
        principal=principal,
        request_id=request_id,
        status=status,
        started_at=started_at,
        lease_until=lease_until,
        result=result,
    )
