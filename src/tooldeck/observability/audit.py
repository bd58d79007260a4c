"""The audit store: one row per tool call, written off the hot path.

SQLite in the data directory by default; any SQLAlchemy URL (PostgreSQL) works.
``record()`` only appends to an in-memory queue (~0.1 µs); a writer thread redacts,
serialises and inserts in batches; ``close()`` (and interpreter exit) flushes.
Arguments and data past ``row_text.MAX_STORED_CHARS`` are kept as their size, hash and head.

Durability (``durability``):

- ``"ack"``: ``record_acked()`` says when the record is safe from a kill of the
  process, and the observed provider answers only after that. On a SQLite file the
  caller copies the serialised, redacted row into the journal (``journal.py``: a file
  mapped into memory, well under 1 µs) and goes on; the writer thread moves journalled rows into
  the database in batches, and any later ``AuditStore`` on the same database stores
  the rows a killed process left there. Without a journal (in-memory SQLite, a server
  database, no ``flock``) the future completes once the row is committed, in a group
  commit with every call waiting at that moment. Either way: safe against a crash of
  the process, not of the machine (SQLite WAL with ``synchronous=NORMAL``, no
  ``fsync`` per call). The WAL is checkpointed by the writer thread (``PASSIVE``).
- ``"batch"``: records wait up to ``flush_interval_s`` (200 ms) in memory; a process
  killed in that window loses them. Faster for a caller that makes calls one by one.

A batch the database refuses is retried row by row, so one bad record (text UTF-8
cannot carry) fails alone; a row that still fails is appended (and fsynced) to
``<fallback>.jsonl``. Values JSON cannot encode (nested too deeply) are stored as a
marker with their size. When neither the database nor the fallback file takes a row
(a full disk), ``healthy`` turns false until a write succeeds again.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import logging
import math
import os
import sqlite3
import threading
import time
from collections import deque
from collections.abc import Mapping
from concurrent.futures import Future
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal, Protocol

from sqlalchemy import (
    create_engine,
    delete,
    event,
    insert,
    select,
)
from sqlalchemy.engine import Engine, ExceptionContext
from sqlalchemy.exc import OperationalError

from tooldeck.core.context import ToolContext
from tooldeck.core.local_db import immediate
from tooldeck.core.result import ToolResult
from tooldeck.core.tool import Arguments
from tooldeck.exceptions import StoreUnavailableError
from tooldeck.observability.audit_reads import AuditReads, AuditRecord
from tooldeck.observability.journal import Journal, Segment
from tooldeck.observability.redact import redact, redact_text
from tooldeck.observability.row_text import arguments_json, call_texts, dumps, utf8_safe
from tooldeck.observability.schema import (
    COLUMNS,
    compiled_insert,
    create_schema_once,
    sqlite_pragmas,
)
from tooldeck.observability.tables import (
    approval_decisions,
    tool_call_hours,
    tool_call_journal,
    tool_calls,
)
from tooldeck.observability.totals import (
    HourKey,
    Totals,
    TotalsKey,
    add_totals,
    hour_of,
    sqlite_totals_upsert,
)

__all__ = ["AuditRecord", "AuditSink", "AuditStore"]

log = logging.getLogger("tooldeck.audit")

_MAINTAIN_EVERY_S = 3600.0
"""How often the writer prunes, stores journals that dead processes left and forgets
old journal markers, in seconds."""
_RETRY_S = 5.0
"""How often the writer tries a database that stopped answering again, in seconds."""


class AuditSink(Protocol):
    """Receives one record per call; must not block (``AuditStore`` is the one in use)."""

    durability: Literal["ack", "batch"]
    """``ack``: the observed provider answers a call only once ``record_acked`` says
    it is stored; ``batch``: ``record`` and go."""
    healthy: bool
    """False while records can be written nowhere (the observed provider then refuses
    calls it must not run unrecorded)."""

    def record(
        self, name: str, arguments: Arguments, ctx: ToolContext | None, result: ToolResult
    ) -> None:
        """Record one finished call."""
        ...

    def record_acked(
        self, name: str, arguments: Arguments, ctx: ToolContext | None, result: ToolResult
    ) -> Future[bool]:
        """Record one finished call; the future says whether it was stored."""
        ...


class AuditStore(AuditReads):
    """SQL-backed audit log with a batching writer thread (ARCHITECTURE.md, embedded defaults).

    Args:
        url: SQLAlchemy URL, e.g. ``sqlite:///path/audit.db`` or a PostgreSQL URL.
        batch_size: Records that wake the writer before its interval.
        flush_interval_s: Longest time a record waits in memory, in seconds.
        fallback_path: JSONL file for rows the database refuses; default beside
            a SQLite file (or the ``journal_dir``), else ``./audit-fallback.jsonl``
            (the runtime gives one in the data dir).
        retention_s: Records older than this many seconds are pruned by the writer
            thread, at start and then hourly; None keeps everything.
        durability: ``"ack"`` (the observed provider waits for ``record_acked``) or
            ``"batch"`` (see the module docstring).
        journal_dir: The folder of the journal (``journal.py``); default beside a
            SQLite file (``audit.journal`` for ``audit.db``), none for other databases
            (the runtime gives PostgreSQL one in the data dir). While a database
            server cannot be reached, journalled rows stay in their segments and are
            stored when it answers again (tried every ``_RETRY_S``); other rows go to
            the fallback file.
    """

    def __init__(
        self,
        url: str,
        *,
        batch_size: int = 256,
        flush_interval_s: float = 0.2,
        fallback_path: Path | None = None,
        retention_s: float | None = None,
        durability: Literal["ack", "batch"] = "batch",
        journal_dir: Path | None = None,
    ) -> None:
        self.url = url
        self.durability = durability
        self.healthy = True
        """False after a row could be written neither to the database nor the fallback."""
        self.engine: Engine = create_engine(url, **_engine_options(url))
        self._raw: sqlite3.Connection | None = None
        """The writes' own connection to a SQLite file (no SQLAlchemy on the write path)."""
        file = None
        if self.engine.dialect.name == "sqlite":
            database = self.engine.url.database
            if database and database != ":memory:":
                file = database
                Path(database).parent.mkdir(parents=True, exist_ok=True)
                journal_dir = journal_dir or Path(database).with_suffix(".journal")
            event.listen(self.engine, "connect", sqlite_pragmas)
            default_fallback = Path(database or ".").with_suffix(".fallback.jsonl")
        else:  # beside the journal when there is one, never a stray file where it started
            default_fallback = (
                journal_dir.with_suffix(".fallback.jsonl") if journal_dir
                else Path("audit-fallback.jsonl")
            )  # fmt: skip
            event.listen(self.engine, "handle_error", _unavailable)
        self.fallback_path = fallback_path or default_fallback
        create_schema_once(self.engine)
        self._insert_sql, self._positional = compiled_insert(self.engine)
        if file is not None:
            self._raw = sqlite3.connect(
                file, isolation_level=None, check_same_thread=False, timeout=5.0
            )
            sqlite_pragmas(self._raw, None)
            self._raw.execute("PRAGMA wal_autocheckpoint=0")  # the writer thread checkpoints
        self._since_checkpoint = 0
        self._second = (0, "")
        """The last second a record was made in, and its text (``_stamp``)."""
        self._unreachable = False
        """The database stopped answering (the writer tries again every ``_RETRY_S``)."""
        self._recover_due = False
        """Segments kept while the database was away wait to be stored."""
        self._sqlite = self.engine.dialect.name == "sqlite"
        self.retention_s = retention_s
        self.batch_size = batch_size
        self.flush_interval_s = flush_interval_s
        self._queue: deque[_Item] = deque()
        self._journal = None if journal_dir is None else Journal.open(journal_dir)
        self._journalled: deque[tuple[Any, ...]] = deque()
        """Rows in the journal's current segment, not yet in the database."""
        self._wake = threading.Event()
        self._write_lock = threading.Lock()
        self._closed = False
        self._recover()
        self._writer = threading.Thread(target=self._run, name="tooldeck-audit", daemon=True)
        self._writer.start()
        atexit.register(self.close)

    @property
    def shown_url(self) -> str:
        """The database's URL without its password (for logs and banners)."""
        return self.engine.url.render_as_string(hide_password=True)

    @classmethod
    def sqlite(cls, path: Path | str, **kwargs: Any) -> AuditStore:
        """An ``AuditStore`` on the SQLite file ``path`` (created with its directory)."""
        return cls(f"sqlite:///{Path(path)}", **kwargs)

    # -- writing ----------------------------------------------------------------------

    def record(
        self, name: str, arguments: Arguments, ctx: ToolContext | None, result: ToolResult
    ) -> None:
        """Queue one call for writing; never blocks, never raises."""
        self._queue.append((time.time(), name, arguments, ctx, result, None))
        if len(self._queue) >= self.batch_size and not self._wake.is_set():
            self._wake.set()

    def record_acked(
        self, name: str, arguments: Arguments, ctx: ToolContext | None, result: ToolResult
    ) -> Future[bool]:
        """Store one call so that a kill of the process cannot lose it.

        Returns a future whose result is True once the row is in the journal, in the
        database, or appended and fsynced to the fallback file; False when none took
        it. A journalled row's future is returned done: the row is serialised and
        appended on the caller's thread. Without a journal (or when the append fails:
        a full disk) the writer commits the row with the others waiting.
        """
        item = (time.time(), name, arguments, ctx, result, None)
        journal = self._journal
        if journal is not None:
            try:
                row = self._row(item)
            except Exception:  # a bug in serialising: the writer says so below
                row = None
            if row is not None:
                with journal.lock:
                    appended = journal.append(row)
                    if appended:
                        self._journalled.append(row)
                if appended:
                    if len(self._journalled) >= self.batch_size and not self._wake.is_set():
                        self._wake.set()  # once: each set wakes the writer, which takes the GIL
                    return _STORED
        done: Future[bool] = Future()
        self._queue.append((*item[:5], done))
        self._wake.set()
        return done

    def _row(self, item: _Item) -> tuple[Any, ...]:
        """One record as a tuple in ``COLUMNS`` order, bound as the dialect needs."""
        ts, name, arguments, ctx, result, _ = item
        error, meta = result.error, result.metadata
        edited = meta.edited
        asked = None
        if edited is not None:  # the record shows what ran, and what was asked
            asked = arguments_json(arguments, check_syntax=True)
            arguments = edited.arguments
        return (
            self._stamp(ts),
            meta.tool_name or name,
            result.status,
            error.type.value if error else None,
            redact_text(error.message) if error else None,
            dumps(redact(error.details)) if error and error.details else None,
            *call_texts(arguments, result.data, check_syntax=error is not None),
            meta.duration_ms,
            meta.attempts,
            result.source_id,
            result.as_of,
            meta.request_id,
            ctx.session_id if ctx else None,
            ctx.run_id if ctx else None,
            ctx.user if ctx else None,
            ctx.profile if ctx else None,
            meta.provider,
            asked,
            redact_text(edited.by) if edited and edited.by else None,
        )

    def _bound(self, moment: datetime) -> Any:
        """``moment`` (UTC) as the dialect stores it.

        On SQLite, the text SQLAlchemy writes and compares with (``2026-11-26
        02:03:29.563768``), made here in 1 µs instead of its 3 µs processor; anywhere
        else, the datetime itself.
        """
        return moment.isoformat(" ", "microseconds")[:26] if self._sqlite else moment

    def _stamp(self, ts: float) -> Any:
        """``ts`` (seconds since the epoch) as ``_bound`` gives it, for a call's record.

        On SQLite the text of the second is made once per second and shared by the
        calls within it (0.3 µs instead of 1.1 µs); it is kept as one tuple, so threads
        that record at once read a second and its text together.
        """
        if not self._sqlite:
            return datetime.fromtimestamp(ts, UTC)
        fraction, whole = math.modf(ts)  # rounded as datetime.fromtimestamp rounds
        second, micros = int(whole), round(fraction * 1e6)
        if micros == 1_000_000:
            second, micros = second + 1, 0
        known = self._second
        if known[0] != second:
            text = datetime.fromtimestamp(second, UTC).isoformat(" ")[:19]
            known = self._second = (second, text)
        return f"{known[1]}.{micros:06d}"

    def flush(self) -> int:
        """Write everything queued or journalled so far, in the calling thread.

        Returns the number of rows written.
        """
        with self._write_lock:
            segment, rows = self._take_journalled()
            items = []
            while self._queue:
                items.append(self._queue.popleft())
            if not items and not rows:
                return 0
            try:
                return self._write(items, rows, segment)
            finally:  # whatever happened, no caller waits forever
                for item in items:
                    _settle(item[5], False)
                if segment is not None:  # the journal rotated: make its next segment
                    self._prepare_segment()

    def _prepare_segment(self) -> None:
        """Have the journal's next segment made now, off the callers' path."""
        journal = self._journal
        if journal is not None:
            try:
                journal.prepare()
            except OSError as exc:  # a full disk: rotate says so, or fails over
                log.debug("audit: cannot make the next journal segment (%s)", exc)

    def _take_journalled(self) -> tuple[Segment | None, list[tuple[Any, ...]]]:
        """The journal's current segment and its rows; later appends go to a new one.

        When no new segment can be made (the folder is gone, the disk is full), the
        journal is retired: this segment is the last, later calls wait for commits.
        """
        journal = self._journal
        if journal is None:
            return None, []
        with journal.lock:
            rows = list(self._journalled)
            self._journalled.clear()
            try:
                return journal.rotate(), rows
            except OSError as exc:
                log.warning("audit: journal stopped (%s); acknowledged calls wait for commits", exc)
                self._journal = None
                return journal.retire(), rows

    def _write(
        self,
        items: list[_Item],
        journalled: list[tuple[Any, ...]] | None = None,
        segment: Segment | None = None,
    ) -> int:
        """Store queued ``items`` and the ``journalled`` rows of ``segment``; returns rows.

        The segment is named in the same transaction and deleted after it; when some
        row could be stored nowhere, it is kept for a later attempt (rows already
        stored may then be stored twice, never lost).
        """
        rows: list[tuple[Any, ...]] = list(journalled or ())
        waiting: list[Future[bool] | None] = [None] * len(rows)
        for item in items:
            try:
                rows.append(self._row(item))
                waiting.append(item[5])
            except Exception:  # a bug in serialising: say so, never sink the batch
                log.exception("audit: cannot serialise a record of %s", item[1])
        name = segment.name if segment else None
        keep = False  # the segment stays for a later attempt
        try:
            self._insert(rows, name)
            stored = [True] * len(rows)
            self._back()
        except StoreUnavailableError as exc:  # the server is away: no row-by-row retry
            self._away(exc)
            kept = len(journalled or ()) if segment is not None else 0
            keep = kept > 0
            stored = [True] * kept + [self._fallback_row(row) for row in rows[kept:]]
        except Exception:
            stored = [self._insert_alone(row) for row in rows]
            if name is not None and all(stored):
                with contextlib.suppress(Exception):
                    self._insert([], name)
        for done, ok in zip(waiting, stored, strict=True):
            _settle(done, ok)
        self.healthy = all(stored) if stored else self.healthy
        if segment is not None:
            if all(stored) and not keep:
                segment.delete()
            else:
                segment.release()
        return len(rows)

    def _away(self, exc: StoreUnavailableError) -> None:
        """Note that the database stopped answering (logged once, without a traceback)."""
        if not self._unreachable:
            self._unreachable = True
            log.warning("audit: %s; calls wait in the journal until it answers", exc)

    def _back(self) -> None:
        """Note that the database answers again; the writer stores what waited."""
        if self._unreachable:
            self._unreachable = False
            self._recover_due = True
            log.warning("audit: the database answers again; storing the journalled calls")

    def _insert(self, rows: list[tuple[Any, ...]], segment: str | None = None) -> None:
        """Insert ``rows`` and their totals, and name ``segment`` as stored, in one commit."""
        if self._raw is not None:
            with immediate(self._raw) as db:
                db.executemany(self._insert_sql, rows)
                totals, hours = _batch_totals(rows)
                db.executemany(*sqlite_totals_upsert(totals))
                db.executemany(*sqlite_totals_upsert(hours, tool_call_hours))
                if segment is not None:
                    db.execute(
                        "INSERT OR IGNORE INTO tool_call_journal (segment, stored_at) VALUES (?, ?)",
                        (segment, self._bound(datetime.now(UTC))),
                    )
            self._since_checkpoint += len(rows)
            return
        params: list[Any] = (
            rows if self._positional else [dict(zip(COLUMNS, r, strict=True)) for r in rows]
        )
        with self.engine.begin() as conn:
            if params:
                conn.exec_driver_sql(self._insert_sql, params)
            totals, hours = _batch_totals(rows)
            add_totals(conn, totals)
            add_totals(conn, hours, tool_call_hours)
            if segment is not None:
                conn.execute(
                    insert(tool_call_journal), {"segment": segment, "stored_at": datetime.now(UTC)}
                )

    def _recover(self) -> None:
        """Store the rows that processes which are gone left in the journal.

        A segment already named in the database is deleted; a line that does not parse
        as a row (cut short by a full disk) goes to the fallback file as text.
        """
        journal = self._journal
        if journal is None:
            return
        for segment in journal.orphans():
            try:
                rows, bad = segment.rows()
                with self.engine.connect() as conn:
                    done = conn.execute(
                        select(tool_call_journal.c.segment).where(
                            tool_call_journal.c.segment == segment.name
                        )
                    ).first()
                if done is not None:
                    segment.delete()
                    continue
                bad += [dumps(row) for row in rows if len(row) != len(COLUMNS)]
                good = [tuple(row) for row in rows if len(row) == len(COLUMNS)]
                with self._write_lock:
                    self._write([], good, segment)
                if self._unreachable:  # kept; tried again once it answers
                    return
                if bad:
                    self._to_fallback([{"_journal_line": line} for line in bad])
                log.info("audit: stored %d journalled calls from %s", len(good), segment.name)
            except StoreUnavailableError as exc:  # tried again once it answers
                self._away(exc)
                with contextlib.suppress(OSError):
                    segment.release()
                return
            except Exception:
                log.exception("audit: cannot store journal segment %s", segment.path)
                with contextlib.suppress(OSError):
                    segment.release()

    def _insert_alone(self, row: tuple[Any, ...]) -> bool:
        """Insert one row of a refused batch (text made UTF-8 safe), else the fallback."""
        safe = tuple(utf8_safe(v) if isinstance(v, str) else v for v in row)
        try:
            self._insert([safe])
            return True
        except Exception:
            log.exception("audit: database write failed; the row goes to %s", self.fallback_path)
        return self._fallback_row(safe)

    def _fallback_row(self, row: tuple[Any, ...]) -> bool:
        """Append ``row`` to the fallback file; False when that fails too."""
        try:
            self._to_fallback([dict(zip(COLUMNS, row, strict=True))])
            return True
        except Exception:
            log.exception("audit: the fallback file %s failed too", self.fallback_path)
            return False

    def _to_fallback(self, records: list[dict[str, Any]]) -> None:
        """Append ``records`` to the fallback file as JSON lines, fsynced.

        Raises:
            OSError: the file cannot be written.
        """
        with self.fallback_path.open("a", encoding="utf-8") as fh:
            for record in records:
                fh.write(json.dumps(record, default=str) + "\n")
            fh.flush()
            os.fsync(fh.fileno())

    def _run(self) -> None:
        next_maintenance = retry_at = time.monotonic()
        while not self._closed:
            if time.monotonic() >= next_maintenance:
                next_maintenance = time.monotonic() + _MAINTAIN_EVERY_S
                self._maintain()
            elif self._recover_due or (self._unreachable and time.monotonic() >= retry_at):
                self._recover_due, retry_at = False, time.monotonic() + _RETRY_S
                self._recover()
            self._wake.wait(self.flush_interval_s)
            self._wake.clear()
            try:
                self.flush()
                self._checkpoint()
            except Exception:
                log.exception("audit: flush failed")

    def _maintain(self) -> None:
        """The writer's hourly work: prune, store orphaned journals, forget old markers."""
        try:
            if self.retention_s is not None:
                self.prune(datetime.now(UTC) - timedelta(seconds=self.retention_s))
            if self._journal is not None:
                self._recover()
                old = datetime.now(UTC) - timedelta(days=1)
                with self._write_lock, self.engine.begin() as conn:
                    conn.execute(
                        delete(tool_call_journal).where(tool_call_journal.c.stored_at < old)
                    )
        except Exception:
            log.exception("audit: maintenance failed")

    def _checkpoint(self, every: int = 1000) -> None:
        """Move the WAL into the database after ``every`` rows (PASSIVE: nobody waits).

        The write connection does not checkpoint on commit (``wal_autocheckpoint=0``):
        a commit made on the caller's thread never pays for one.
        """
        if self._raw is None or self._since_checkpoint < every:
            return
        with self._write_lock:
            self._raw.execute("PRAGMA wal_checkpoint(PASSIVE)")
            self._since_checkpoint = 0

    def close(self) -> None:
        """Stop the writer and flush what is queued. Idempotent."""
        if self._closed:
            return
        self._closed = True
        self._wake.set()
        self._writer.join(timeout=10)
        self.flush()
        if self._journal is not None:
            self._journal.close()
        if self._raw is not None:
            with self._write_lock, contextlib.suppress(sqlite3.Error):  # a full disk
                self._raw.execute("PRAGMA wal_checkpoint(PASSIVE)")
            self._raw.close()
        self.engine.dispose()
        atexit.unregister(self.close)

    def prune(self, before: datetime) -> int:
        """Delete call records and decisions older than ``before``; returns the calls deleted.

        Running totals (``/metrics``) are kept.
        """
        self.flush()
        cutoff = before.astimezone(UTC)
        with self._write_lock, self.engine.begin() as conn:
            deleted = conn.execute(delete(tool_calls).where(tool_calls.c.created_at < cutoff))
            hour = cutoff.replace(minute=0, second=0, microsecond=0)  # whole hours only
            conn.execute(delete(tool_call_hours).where(tool_call_hours.c.hour < hour))
            conn.execute(delete(approval_decisions).where(approval_decisions.c.decided_at < cutoff))
        return int(deleted.rowcount or 0)

    def record_decision(self, approval: Mapping[str, Any]) -> None:
        """Write one confirmation decision (``Approval.as_dict()`` shape) at once.

        Decisions are rare and must not be lost, so they are written synchronously;
        a refused write goes to the fallback file like a refused batch.
        """
        row = {
            "decided_at": datetime.fromtimestamp(approval.get("decided_at") or time.time(), UTC),
            "approval_id": approval["approval_id"],
            "tool_name": approval["tool"],
            "decision": approval["status"],
            "arguments_hash": approval["arguments_hash"],
            "arguments": dumps(redact(approval.get("arguments"))),
            "edited_arguments": (
                None
                if approval.get("edited_arguments") is None
                else dumps(redact(approval["edited_arguments"]))
            ),
            "principal": approval.get("principal"),
            "approver": approval.get("approver"),
            "profile": approval.get("profile"),
            "message": approval.get("message"),
        }
        try:
            with self.engine.begin() as conn:
                conn.execute(insert(approval_decisions), row)
        except StoreUnavailableError as exc:
            log.warning("audit: %s; the decision goes to %s", exc, self.fallback_path)
            self._fallback_decision(row)
        except Exception:
            log.exception("audit: cannot write a decision; it goes to %s", self.fallback_path)
            self._fallback_decision(row)

    def _fallback_decision(self, row: dict[str, Any]) -> None:
        """Append a decision the database did not take to the fallback file."""
        with self.fallback_path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(row, default=str) + "\n")


_Item = tuple[float, str, Arguments, "ToolContext | None", ToolResult, "Future[bool] | None"]
"""A queued record: time, tool name, arguments, context, result, the waiting future."""


class _Done(Future[bool]):
    """A future settled at birth, which says so without taking its lock (0.3 µs a call)."""

    def done(self) -> bool:
        return True


_STORED = _Done()
_STORED.set_result(True)
"""What ``record_acked`` returns for a journalled row: stored, nothing to wait for."""


def _settle(done: Future[bool] | None, ok: bool) -> None:
    if done is not None and not done.done():
        done.set_result(ok)


_TOTALS_FIELDS = tuple(COLUMNS.index(n) for n in ("tool_name", "status", "error_type", "profile"))
_DURATION_FIELD = COLUMNS.index("duration_ms")


def _batch_totals(
    rows: list[tuple[Any, ...]],
) -> tuple[dict[TotalsKey, Totals], dict[HourKey, Totals]]:
    """The running totals, and the hourly ones, to add for a batch of rows.

    Durations are grouped by hour and key first, then counted per group (``Totals.of``):
    0.32 µs a row, against 0.63 µs for two ``Totals.add`` per row.
    """
    groups: dict[HourKey, list[float | None]] = {}
    tool, status, error_type, profile = _TOTALS_FIELDS
    for row in rows:
        group = (hour_of(row[0]), row[tool], row[status], row[error_type] or "", row[profile] or "")
        durations = groups.get(group)
        if durations is None:
            groups[group] = [row[_DURATION_FIELD]]
        else:
            durations.append(row[_DURATION_FIELD])
    totals: dict[TotalsKey, Totals] = {}
    hours: dict[HourKey, Totals] = {}
    for hour_key, durations in groups.items():
        counted = hours[hour_key] = Totals.of(durations)
        key: TotalsKey = hour_key[1:]
        entry = totals.get(key)
        if entry is None:
            entry = totals[key] = Totals()
        entry.merge(counted)
    return totals, hours


def _engine_options(url: str) -> dict[str, Any]:
    """``create_engine`` options: a server that does not answer fails in 5 s, not never."""
    if url.startswith("sqlite"):
        return {}
    return {"connect_args": {"connect_timeout": 5}}


def _unavailable(context: ExceptionContext) -> None:
    """A database that cannot be reached raises ``StoreUnavailableError`` (HTTP 503).

    A SQLAlchemy ``handle_error`` hook: a lost or refused connection (a DBAPI
    ``OperationalError``) is replaced; other errors pass. The pool drops connections
    a disconnect invalidated, so a later call reconnects by itself.
    """
    if context.is_disconnect or isinstance(context.sqlalchemy_exception, OperationalError):
        cause = context.original_exception
        raise StoreUnavailableError.reaching("audit", cause) from cause
