"""A store's tables in a private SQLite file, or in PostgreSQL shared by every replica.

The approval and schedule stores write their SQL once, with ``?`` placeholders and
what both databases understand (``INSERT ... ON CONFLICT``, ``DOUBLE PRECISION``),
and run it through a ``SharedDb``:

- **SQLite** (the embedded default): one connection to a ``0600`` file
  (``local_db.open_private_db``); a write transaction is ``BEGIN IMMEDIATE``, so the
  processes of one data dir take turns.
- **PostgreSQL** (``[store] url``): a small ``psycopg_pool`` pool; the store's tables
  live in the schema ``tooldeck`` and are made by the store's Alembic revisions
  (``core.migrations``) when the store opens. A write transaction first takes a
  transaction-level advisory lock named after the store, so replicas take turns as
  processes do on SQLite, and every read-modify-write stays simple. A lone statement
  (``execute``) is committed on its own, in one round trip (autocommit). A server that
  cannot be reached raises ``StoreUnavailableError`` (within the pool's 5 s wait);
  the pool reconnects by itself when it is back.

Example::

    db = SharedDb.sqlite(path, "the approval store", "whoever can write it approves", SCHEMA)
    with db.transaction() as tx:
        tx.execute("UPDATE approval_requests SET status = ? WHERE id = ?", ("used", "a1"))
"""

from __future__ import annotations

import contextlib
import functools
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Literal, Protocol

from tooldeck.core.local_db import immediate, open_private_db
from tooldeck.exceptions import StoreUnavailableError

__all__ = ["Cursor", "SharedDb"]


class Cursor(Protocol):
    """What a statement gives back: a DB-API cursor's ``fetchone`` and ``fetchall``."""

    def fetchone(self) -> Any:
        """The next row, or None."""

    def fetchall(self) -> list[Any]:
        """The remaining rows."""


class _Session(Protocol):
    def execute(self, sql: str, params: Sequence[Any] = (), /) -> Cursor: ...


class SharedDb:
    """One store's tables in a SQLite file or a PostgreSQL database (module docstring).

    Build it with ``SharedDb.sqlite`` or ``SharedDb.postgres``.

    Attributes:
        dialect: ``sqlite`` or ``postgresql``.
        shared: True on PostgreSQL: other machines change the rows (waiters poll).
        IntegrityError: The driver's exception for a broken unique or key constraint.
    """

    def __init__(
        self,
        dialect: Literal["sqlite", "postgresql"],
        *,
        connection: sqlite3.Connection | None = None,
        pool: Any = None,
        lock_name: str = "",
    ) -> None:
        self.dialect = dialect
        self.shared = dialect == "postgresql"
        self._sqlite = connection
        self._pool = pool
        self._lock_name = lock_name
        self._lock = threading.Lock()
        self.IntegrityError: type[Exception]
        if pool is None:
            self.IntegrityError = sqlite3.IntegrityError
        else:
            import psycopg

            self.IntegrityError = psycopg.IntegrityError

    @classmethod
    def sqlite(cls, path: Path, what: str, risk: str, schema: str) -> SharedDb:
        """The private SQLite file ``path`` with ``schema`` run (``local_db.open_private_db``).

        Raises:
            ConfigError: the file or folder is not private to this user, or the file
                is not a SQLite database.
        """
        return cls("sqlite", connection=open_private_db(path, what, risk, schema))

    @classmethod
    def postgres(cls, url: str, name: str, versions: Path) -> SharedDb:
        """The store ``name`` in the PostgreSQL at ``url``, migrated by ``versions``' revisions.

        Args:
            url: A ``postgresql://`` URL.
            name: The store's name: its Alembic version table and its lock.
            versions: The folder of the store's Alembic revisions.

        Raises:
            ConfigError: the server cannot be reached (5 s) or refused the migration.
        """
        from psycopg_pool import ConnectionPool

        from tooldeck.core.migrations import upgrade

        upgrade(url, versions, name)
        pool = ConnectionPool(
            url, min_size=1, max_size=4, open=False, timeout=_WAIT_S,
            kwargs={"connect_timeout": 5, "options": "-c search_path=tooldeck",
                    "autocommit": True},  # execute: one round trip; transaction: BEGIN
        )  # fmt: skip
        pool.open()
        return cls("postgresql", pool=pool, lock_name=f"tooldeck.{name}")

    @contextlib.contextmanager
    def _connection(self) -> Iterator[Any]:
        """A pooled connection; a server that cannot be reached is ``StoreUnavailableError``."""
        import psycopg

        try:
            with self._pool.connection() as conn:
                yield conn
        except psycopg.OperationalError as exc:  # refused, cut, or no connection in _WAIT_S
            store = self._lock_name.removeprefix("tooldeck.")
            raise StoreUnavailableError.reaching(store, exc) from exc

    @contextlib.contextmanager
    def transaction(self, *, serialised: bool = True) -> Iterator[_Session]:
        """One write transaction, the only one of this store at a time (module docstring).

        Committed when the block ends, rolled back if it raises. ``serialised=False``
        skips PostgreSQL's advisory lock, for a store whose statements decide races
        themselves (the receipts' ``INSERT ... ON CONFLICT``); SQLite serialises anyway.

        Raises:
            StoreUnavailableError: PostgreSQL cannot be reached (after up to 5 s).
        """
        if self._pool is None:
            assert self._sqlite is not None
            with self._lock, immediate(self._sqlite) as db:
                yield db
            return
        with self._connection() as conn, conn.transaction():
            if serialised:
                conn.execute("select pg_advisory_xact_lock(hashtext(%s))", (self._lock_name,))
            yield _Postgres(conn)

    def execute(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        """One statement, committed on its own (autocommit); its rows (none for a write).

        Raises:
            StoreUnavailableError: PostgreSQL cannot be reached (after up to 5 s).
        """
        if self._pool is None:
            assert self._sqlite is not None
            with self._lock:
                cursor = self._sqlite.execute(sql, params)
                return cursor.fetchall()
        with self._connection() as conn:
            cursor = conn.execute(_postgres_sql(sql), params)
            return cursor.fetchall() if cursor.description is not None else []

    def close(self) -> None:
        """Close the file or the pool."""
        with self._lock:
            if self._sqlite is not None:
                self._sqlite.close()
            if self._pool is not None:
                self._pool.close()


_WAIT_S = 5.0
"""Seconds a PostgreSQL store waits for a pooled connection before it is unavailable."""


class _Postgres:
    """A psycopg connection that takes the stores' ``?`` placeholders."""

    def __init__(self, conn: Any) -> None:
        self._conn = conn

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Cursor:
        cursor: Cursor = self._conn.execute(_postgres_sql(sql), params)
        return cursor


@functools.cache
def _postgres_sql(sql: str) -> str:
    """``sql`` with psycopg's ``%s`` placeholders (the stores' SQL holds no other ``?``/``%``)."""
    return sql.replace("%", "%%").replace("?", "%s")
