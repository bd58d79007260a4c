"""Where an ``ApprovalStore`` keeps its approvals: in memory, a SQLite file or PostgreSQL.

The file (``<data_dir>/approvals.db``) is what lets a person approve, from a terminal
(``tooldeck approvals``) or another server process, a call that a stdio MCP session
asked for; and what keeps pending approvals over a restart. PostgreSQL (``[store]
url``) does the same for every replica: an approval given on one executes on another.
Every operation is one serialised transaction (``SharedDb.transaction``) that
expires what is due (in SQL), reads the rows the operation is about (one id, one
call, or the pending ones: indexed columns), and writes back the rows it changed; so
two processes never decide the same approval twice, and the cost does not grow with
the approvals decided earlier.

Whoever can write the file can approve anything, so it is created ``0600`` in a
``0700`` folder, and a file or folder that another user owns or may write is refused.
The asked arguments are stored redacted (``observability.redact``), as the audit's.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from tooldeck.core.confirmation import ConfirmationDecision, ConfirmationRequest
from tooldeck.core.shared_db import SharedDb

if TYPE_CHECKING:
    from tooldeck.providers.approvals import Approval

__all__ = ["ApprovalMemory", "ApprovalTable", "Rows", "call_key"]

Rows = tuple[Literal["id", "call", "pending"], str | None]
"""Which approvals an operation reads: ``("id", approval_id)``, ``("call", call_key)``
(every approval of the same call) or ``("pending", None)``."""


def call_key(request: ConfirmationRequest) -> str:
    """What makes two requests the same call: tool, arguments hash and principal."""
    return f"{request.tool}\n{request.arguments_hash}\n{request.principal}"


class ApprovalMemory:
    """Approvals in this process only (the default for an ``ApprovalStore`` without a path)."""

    shared = False
    """Whether another process may change the approvals (then waiters poll)."""

    def __init__(self) -> None:
        self._items: dict[str, Approval] = {}
        self._lock = threading.Lock()

    @contextlib.contextmanager
    def transaction(self, rows: Rows, now: float, keep_s: float) -> Iterator[dict[str, Approval]]:
        """Every approval by id (``rows`` is for the file), expired as of ``now``."""
        with self._lock:
            expire(self._items, now, keep_s)
            yield self._items

    def close(self) -> None:
        """Nothing to close."""


class ApprovalTable:
    """Approvals in a table shared by every process of a data dir, or every replica.

    Build it with ``ApprovalTable.file`` (SQLite) or ``ApprovalTable.postgres``.
    """

    shared = True
    """Whether another process may change the approvals (then waiters poll)."""

    def __init__(self, db: SharedDb) -> None:
        self._db = db

    @classmethod
    def file(cls, path: Path) -> ApprovalTable:
        """Approvals in the SQLite file ``path`` (its folder made ``0700`` when missing).

        Raises:
            ConfigError: the file or its folder is owned by another user or writable
                by group or others (anyone who can write it could approve calls), or
                the file is not a SQLite database.
        """
        risk = "whoever can write it can approve calls"
        return cls(SharedDb.sqlite(path, "the approval store", risk, _SCHEMA))

    @classmethod
    def postgres(cls, url: str) -> ApprovalTable:
        """Approvals in the PostgreSQL at ``url`` (table ``tooldeck.approval_requests``).

        Raises:
            ConfigError: the server cannot be reached (5 s) or refused the migration.
        """
        versions = Path(__file__).with_name("migrations") / "approvals"
        return cls(SharedDb.postgres(url, "approvals", versions))

    @contextlib.contextmanager
    def transaction(self, rows: Rows, now: float, keep_s: float) -> Iterator[dict[str, Approval]]:
        """The approvals ``rows`` names, by id; what the block changes is written back.

        First, approvals past their expiry are marked ``expired``, and those expired
        more than ``keep_s`` ago deleted. A row that cannot be read (written by a newer
        version, or damaged) is left as it is and not shown.
        """
        with self._db.transaction() as db:
            db.execute("DELETE FROM approval_requests WHERE expires_at < ?", (now - keep_s,))
            db.execute(_EXPIRE, (now,))
            kind, value = rows
            stored = db.execute(_SELECT[kind], () if value is None else (value,)).fetchall()
            items: dict[str, Approval] = {}
            before = {approval_id: (status, body) for approval_id, status, body in stored}
            for approval_id, (status, body) in before.items():
                with contextlib.suppress(ValueError, TypeError, KeyError):
                    items[approval_id] = _load(body, status)
            yield items
            for approval_id, approval in items.items():
                body = _dump(approval)
                if before.get(approval_id) != (approval.status, body):
                    if self._db.dialect == "postgresql":  # wakes replicas waiting on it
                        db.execute("SELECT pg_notify('tooldeck_approvals', ?)", (approval_id,))
                    db.execute(
                        _UPSERT,
                        (
                            approval_id,
                            approval.status,
                            call_key(approval.request),
                            approval.request.expires_at,
                            body,
                        ),
                    )

    def close(self) -> None:
        """Close the database connection."""
        self._db.close()


def expire(items: dict[str, Approval], now: float, keep_s: float) -> None:
    """Mark approvals past their expiry ``expired``; drop those expired ``keep_s`` ago."""
    for approval_id, item in list(items.items()):
        if item.request.expires_at > now:
            continue
        if now - item.request.expires_at > keep_s:
            del items[approval_id]
        elif item.status in ("pending", "approved", "denied"):
            items[approval_id] = dataclasses.replace(item, status="expired")


_SCHEMA = """
PRAGMA journal_mode=WAL;
CREATE TABLE IF NOT EXISTS approval_requests (
    id TEXT PRIMARY KEY,
    status TEXT NOT NULL,
    call_key TEXT NOT NULL,
    expires_at DOUBLE PRECISION NOT NULL,
    body TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS approval_requests_call ON approval_requests (call_key);
CREATE INDEX IF NOT EXISTS approval_requests_status ON approval_requests (status);
"""
_EXPIRE = (
    "UPDATE approval_requests SET status = 'expired' "
    "WHERE expires_at <= ? AND status IN ('pending', 'approved', 'denied')"
)
_SELECT = {
    "id": "SELECT id, status, body FROM approval_requests WHERE id = ?",
    "call": "SELECT id, status, body FROM approval_requests WHERE call_key = ?",
    "pending": "SELECT id, status, body FROM approval_requests WHERE status = 'pending'",
}
_UPSERT = (
    "INSERT INTO approval_requests (id, status, call_key, expires_at, body) "
    "VALUES (?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET status = excluded.status, "
    "call_key = excluded.call_key, expires_at = excluded.expires_at, body = excluded.body"
)


def _dump(approval: Approval) -> str:
    """The row's body, its asked arguments redacted as the audit's are.

    An API key given to ``store_credentials`` is shown to the approver as ``***`` and never
    written. A call is matched by its arguments' hash, taken before, so nothing runs from
    this copy.
    """
    from tooldeck.observability.redact import redact  # the package loads the audit: not at import

    body = dataclasses.asdict(approval)
    del body["status"]  # a column of its own, which expiry updates in SQL
    body["request"]["arguments"] = redact(body["request"]["arguments"])
    return json.dumps(body, sort_keys=True, separators=(",", ":"))


def _load(body: str, status: str) -> Approval:
    from tooldeck.providers.approvals import Approval

    data: dict[str, Any] = json.loads(body)
    decision = data.pop("decision")
    return Approval(
        request=ConfirmationRequest(**data.pop("request")),
        decision=None if decision is None else ConfirmationDecision(**decision),
        status=status,  # type: ignore[arg-type]
        **data,
    )
