"""The audit database's schema.

Creating it (also when processes race to), the SQLite settings of every connection,
the compiled insert of a row.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from sqlalchemy import bindparam, insert, inspect
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import OperationalError

from tooldeck.observability.tables import (
    metadata,
    runs,
    tool_call_hours,
    tool_call_totals,
    tool_calls,
)
from tooldeck.observability.totals import backfill_totals

__all__ = ["COLUMNS", "compiled_insert", "create_schema_once", "create_tables", "sqlite_pragmas"]

COLUMNS = tuple(c.name for c in tool_calls.columns if c.name != "id")
"""A row's values, in this order (``id`` is the database's)."""


def compiled_insert(engine: Engine) -> tuple[str, bool]:
    """The INSERT for ``COLUMNS`` compiled for ``engine``'s dialect; positional or not.

    Positional dialects (SQLite) take tuples, named ones (psycopg) take dicts.

    Writes skip SQLAlchemy's per-row parameter processing (more than half the cost of
    a batch): the writer hands the driver plain values in column order.
    """
    stmt = insert(tool_calls).values({name: bindparam(name) for name in COLUMNS})
    compiled = stmt.compile(dialect=engine.dialect)
    if compiled.positional:
        order = tuple(compiled.positiontup or ())
        if order != COLUMNS:
            raise RuntimeError(f"audit insert binds {order}, expected {COLUMNS}")
    return compiled.string, bool(compiled.positional)


def sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
    """WAL, ``synchronous=NORMAL`` and a 5 s busy timeout (SQLAlchemy ``connect`` hook)."""
    cursor = dbapi_conn.cursor()
    cursor.execute("PRAGMA busy_timeout=5000")  # first: switching to WAL takes a lock
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


def create_schema_once(engine: Engine, attempts: int = 6) -> None:
    """``_create_schema``, when other processes may be creating the same schema.

    Two tooldeck processes started together on a new project (a desktop client's
    ``tooldeck mcp`` beside ``tooldeck serve``, ``tooldeck approvals``) both find the
    tables missing and both create them; the slower one's ``CREATE TABLE`` (or ``ADD
    COLUMN``, or ``CREATE INDEX``) fails because the other's landed first. Creation is
    idempotent, so it is tried again and then finds everything there.

    On PostgreSQL the tables are the audit store's Alembic revisions
    (``observability/migrations/audit``, version table ``tooldeck.alembic_audit``),
    applied by ``core.migrations.upgrade`` under its advisory lock: replicas starting
    together on a new database migrate it once.

    Raises:
        OperationalError: a failure that is not that race, or the race every time.
        ConfigError: PostgreSQL cannot be reached, or a newer tooldeck migrated it.
    """
    if engine.dialect.name == "postgresql":
        from tooldeck.core.migrations import upgrade  # Alembic only for PostgreSQL

        url = engine.url.set(drivername="postgresql").render_as_string(hide_password=False)
        upgrade(url, Path(__file__).with_name("migrations") / "audit", "audit", schema=None)
        return
    for attempt in range(attempts):
        try:
            with engine.begin() as conn:
                create_tables(conn)
            return
        except OperationalError as exc:
            text = str(exc)
            raced = "already exists" in text or "duplicate column" in text or "locked" in text
            if not raced or attempt == attempts - 1:
                raise
            time.sleep(0.05 * (attempt + 1))


def create_tables(conn: Connection) -> None:
    """Create missing tables, columns and indexes; fill the totals of a database from before them."""
    inspector = inspect(conn)
    had_totals = inspector.has_table(tool_call_totals.name)
    had_hours = inspector.has_table(tool_call_hours.name)
    had = {
        table: {c["name"] for c in inspector.get_columns(table.name)}
        for table in (tool_calls, runs)
        if inspector.has_table(table.name)
    }
    metadata.create_all(conn)
    for table, columns in had.items():
        for column in table.columns:
            if column.name not in columns:  # a database from before the column
                kind = column.type.compile(dialect=conn.dialect)
                conn.exec_driver_sql(f"ALTER TABLE {table.name} ADD COLUMN {column.name} {kind}")
    for index in tool_calls.indexes:
        index.create(conn, checkfirst=True)
    if not had_totals:
        backfill_totals(conn)
    if not had_hours:
        backfill_totals(conn, tool_call_hours)
