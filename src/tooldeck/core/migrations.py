"""Schema migrations of the stores kept in PostgreSQL: Alembic, under an advisory lock.

Each store (the audit, approvals, receipts, schedules...) owns a folder of Alembic revisions
and a version table of its own (``tooldeck.alembic_<store>``), so a pack's tables
migrate with the pack and no store depends on another's history. ``upgrade`` runs
when a store opens: it takes a transaction-level advisory lock first, so when two
replicas start at once one migrates and the other then finds the schema current.
A revision's id is its file's name, ``<store>_<NNNN>``, numbered in order: a database
whose version table already holds the newest one is current, which one query tells
without importing Alembic (≈375 ms of a process's start). SQLite files need none of this: their schema is ``CREATE ... IF NOT EXISTS`` (the
embedded default does not import Alembic).
"""

from __future__ import annotations

import threading
from pathlib import Path

from tooldeck.exceptions import ConfigError

__all__ = ["sqlalchemy_url", "upgrade"]

_MIGRATION_LOCK = "select pg_advisory_xact_lock(hashtext('tooldeck.migrate'))"
"""Taken before any store migrates a shared PostgreSQL, so that replicas starting
together do it one at a time."""

_done: set[tuple[str, str]] = set()
_lock = threading.Lock()


def sqlalchemy_url(url: str) -> str:
    """``postgresql://...`` as SQLAlchemy's URL for the psycopg 3 driver."""
    return "postgresql+psycopg://" + url.split("://", 1)[1]


def upgrade(url: str, versions: Path, store: str, *, schema: str | None = "tooldeck") -> None:
    """Apply ``versions``' Alembic revisions to the PostgreSQL at ``url`` (once per process).

    Args:
        url: A ``postgresql://`` URL.
        versions: The folder of the store's revisions.
        store: The store's name (its version table is ``tooldeck.alembic_<store>``).
        schema: The schema the revisions' unqualified names live in (made if missing);
            None: the URL's own ``search_path`` (the audit's tables, from before).

    Raises:
        ConfigError: the server cannot be reached (5 s) or refused us, or the database
            holds a revision this version of tooldeck does not know (a newer tooldeck
            migrated it); the message names the URL without its password.
    """
    with _lock:
        if (url, store) in _done:
            return
        if _current(url, versions, store):
            _done.add((url, store))
            return
        from alembic import command
        from alembic.config import Config
        from alembic.util import CommandError
        from sqlalchemy import create_engine
        from sqlalchemy.exc import DBAPIError
        from sqlalchemy.pool import NullPool

        config = Config()
        config.set_main_option("script_location", str(Path(__file__).with_name("alembic")))
        config.set_main_option("version_locations", str(versions))
        config.set_main_option("path_separator", "os")
        engine = create_engine(
            sqlalchemy_url(url), poolclass=NullPool, connect_args={"connect_timeout": 5}
        )
        try:
            with engine.begin() as conn:
                conn.exec_driver_sql(_MIGRATION_LOCK)
                conn.exec_driver_sql("create schema if not exists tooldeck")  # versions
                if schema is not None:
                    conn.exec_driver_sql(f"create schema if not exists {schema}")
                    conn.exec_driver_sql(f"set local search_path to {schema}")
                config.attributes["connection"] = conn
                config.attributes["version_table"] = f"alembic_{store}"
                command.upgrade(config, "head")
        except (DBAPIError, CommandError) as exc:
            raise _unavailable(url, store, getattr(exc, "orig", None) or exc) from None
        finally:
            engine.dispose()
        _done.add((url, store))


def _current(url: str, versions: Path, store: str) -> bool:
    """Whether the store's version table holds the newest revision in ``versions``.

    Raises:
        ConfigError: the server cannot be reached (5 s) or refused us.
    """
    import psycopg

    newest = max(path.stem for path in versions.glob(f"{store}_*.py"))
    try:
        with psycopg.connect(url, connect_timeout=5) as conn:
            row = conn.execute(f"select version_num from tooldeck.alembic_{store}").fetchone()
    except (psycopg.errors.UndefinedTable, psycopg.errors.InvalidSchemaName):
        return False  # a new database: Alembic makes it
    except psycopg.Error as exc:
        raise _unavailable(url, store, exc) from None
    return row is not None and row[0] == newest


def _unavailable(url: str, store: str, exc: BaseException) -> ConfigError:
    """The error for a store that cannot be opened: the URL without its password, the reason."""
    from sqlalchemy import make_url

    reason = str(exc).strip().splitlines()[0]
    where = make_url(url).render_as_string(hide_password=True)
    return ConfigError(f"cannot open the {store} store in {where}: {reason}")
