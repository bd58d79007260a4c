"""Receipts in PostgreSQL, shared by every replica (``[store] url`` or ``[receipts] url``).

The same operations as ``ReceiptFile``, on the table ``tooldeck.receipts`` (made by the
Alembic revisions in ``providers/migrations``) over a ``SharedDb`` pool (at most 4
connections, opened on first use). ``begin`` is one ``INSERT ... ON CONFLICT DO
NOTHING``: of two replicas beginning one key, exactly one owns it. Every operation is
one statement committed on its own, one network round trip (a keyed call costs two:
``begin`` and ``finish``), run in a worker thread (``wait=False`` always answers
``StoreBusy``). A server that cannot be reached raises ``StoreUnavailableError``; the
receipts layer then answers ``unavailable`` and runs nothing, and the pool reconnects
by itself.
"""

from __future__ import annotations

import threading
from pathlib import Path

from tooldeck.core.shared_db import SharedDb
from tooldeck.providers.receipt_file import Receipt, StoreBusy, receipt_of

__all__ = ["PostgresReceipts"]


class PostgresReceipts:
    """Receipts in a PostgreSQL database (see the module docstring).

    Args:
        url: A ``postgresql://`` URL.
        keep_s: How long a receipt is kept, in seconds.
    """

    def __init__(self, url: str, *, keep_s: float = 86_400.0) -> None:
        self.url = url
        self.keep_s = keep_s
        self._db: SharedDb | None = None
        self._lock = threading.Lock()
        self._purged = 0.0

    def begin(self, receipt: Receipt, *, wait: bool = True) -> Receipt | None:
        """Store ``receipt`` unless its key has one; None: stored, ours to run."""
        _thread_only(wait)
        db = self._shared()
        if receipt.started_at - self._purged > 60.0:
            db.execute(
                "delete from receipts where started_at < ?", (receipt.started_at - self.keep_s,)
            )
            self._purged = receipt.started_at
        for _ in range(3):  # a receipt deleted between the two statements: try again
            inserted = db.execute(
                "insert into receipts (key, tool, principal, request_id, status, "
                "started_at, lease_until) values (?, ?, ?, ?, 'running', ?, ?) "
                "on conflict (key) do nothing returning key",
                receipt.new_row(),
            )
            if inserted:
                return None
            found = db.execute(_SELECT, (receipt.key,))
            if found:
                return receipt_of(found[0])
        raise RuntimeError(f"receipt {receipt.key[:12]} kept appearing and disappearing")

    def get(self, key: str, *, wait: bool = True) -> Receipt | None:
        """The receipt stored for ``key``, or None."""
        _thread_only(wait)
        found = self._shared().execute(_SELECT, (key,))
        return receipt_of(found[0]) if found else None

    def extend(self, key: str, lease_until: float, *, wait: bool = True) -> None:
        """Move a ``running`` receipt's lease to ``lease_until``."""
        _thread_only(wait)
        self._shared().execute(
            "update receipts set lease_until = ? where key = ? and status = 'running'",
            (lease_until, key),
        )

    def finish(self, key: str, result: str, *, wait: bool = True) -> None:
        """Store the call's result (JSON) and mark its receipt ``done``."""
        _thread_only(wait)
        self._shared().execute(
            "update receipts set status = 'done', result = ? where key = ?", (result, key)
        )

    def forget(self, key: str, *, wait: bool = True) -> None:
        """Delete the receipt of a call that did not run."""
        _thread_only(wait)
        self._shared().execute("delete from receipts where key = ?", (key,))

    def close(self) -> None:
        """Close the pool (it reopens on next use)."""
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    def _shared(self) -> SharedDb:
        """The pool, opened (and the table migrated) on first use.

        Each operation is one statement committed on its own (one round trip): the
        ``INSERT ... ON CONFLICT DO NOTHING`` decides which of two replicas owns a
        key, so no operation needs a transaction or the store's lock.
        """
        if self._db is None:
            with self._lock:
                if self._db is None:
                    versions = Path(__file__).with_name("migrations") / "receipts"
                    self._db = SharedDb.postgres(self.url, "receipts", versions)
        return self._db


def _thread_only(wait: bool) -> None:
    if not wait:
        raise StoreBusy  # a network round trip: never on the event loop


_SELECT = (
    "select key, tool, principal, request_id, status, started_at, lease_until, result "
    "from receipts where key = ?"
)
