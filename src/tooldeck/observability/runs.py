"""Agent runs in the audit database: one row per run, one per event (``runs``, ``run_events``).

The store keeps JSON records and knows nothing of their shape beyond id, state,
sequence number and type; ``tooldeck.agent.runs`` owns the models and the state machine.
Calls are synchronous and short; the run manager makes them from a worker thread.

With the audit database shared by replicas (``[store] url``), the store is also how
they see each other's runs: the process running a run ``touch``es it while it runs
(its lease), any process fails runs whose lease ran out (``stale``, ``save(...,
stale_before=)``), and a process asks the one running a run to cancel it
(``request_cancel``, read back with ``cancel_requests``). On PostgreSQL each of these
writes also notifies ``tooldeck_runs`` (``core.notify``) with the run id (``cancel:``
and the id for a cancel request), so followers need not wait for their next poll.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection, func, insert, select, text, update
from sqlalchemy.engine import Engine

from tooldeck.observability.redact import redact, redact_text
from tooldeck.observability.tables import owned_by, run_events, runs

__all__ = ["RunStore"]


class RunStore:
    """Persists run records and their events (SQLAlchemy; the audit store's engine).

    Args:
        engine: An engine whose database has the ``runs`` and ``run_events`` tables
            (``AuditStore`` creates them).
    """

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def save(
        self,
        record: Mapping[str, Any],
        event: Mapping[str, Any] | None = None,
        *,
        stale_before: datetime | None = None,
    ) -> bool:
        """Insert or update the run ``record`` (needs ``run_id``, ``state``, ``question``).

        With ``event``, store it in the same transaction (a state change and the event
        announcing it are written together or not at all). With ``stale_before``, only
        update a stored run last touched before then (its process died; a live one
        touched it since): False when nothing was written.
        """
        with self.engine.begin() as conn:
            if not _write_run(conn, record, stale_before=stale_before):
                return False
            if event is not None:
                conn.execute(_event_insert(event))
            _notify(conn, record["run_id"])
        return True

    def archive(self, record: Mapping[str, Any], events: Sequence[Mapping[str, Any]]) -> None:
        """Store a finished run kept elsewhere (a Temporal workflow): its record and events.

        One transaction; the events already stored (by ``seq``) are not stored again,
        so a retry is harmless.
        """
        with self.engine.begin() as conn:
            _write_run(conn, record, created_at=_when(record.get("created_at")))
            stored = conn.execute(
                select(func.max(run_events.c.seq)).where(run_events.c.run_id == record["run_id"])
            ).scalar()
            for event in events:
                if stored is None or event["seq"] > stored:
                    conn.execute(_event_insert(event))
            _notify(conn, record["run_id"])

    def touch(self, run_ids: list[str]) -> None:
        """Renew the lease of runs this process runs (their ``updated_at`` is now)."""
        stmt = update(runs).where(runs.c.id.in_(run_ids)).values(updated_at=datetime.now(UTC))
        with self.engine.begin() as conn:
            conn.execute(stmt)

    def request_cancel(self, run_id: str, reason: str) -> bool:
        """Ask the process running ``run_id`` to cancel it; False when it has finished."""
        stmt = (
            update(runs)
            .where(runs.c.id == run_id, runs.c.state.in_(_UNFINISHED))
            .values(cancel_requested=reason[:200])
        )
        with self.engine.begin() as conn:
            asked = bool(conn.execute(stmt).rowcount)
            _notify(conn, f"cancel:{run_id}")
            return asked

    def cancel_requests(self, run_ids: list[str]) -> dict[str, str]:
        """The cancels asked of these runs, by run id: the reason."""
        stmt = select(runs.c.id, runs.c.cancel_requested).where(
            runs.c.id.in_(run_ids), runs.c.cancel_requested.is_not(None)
        )
        with self.engine.connect() as conn:
            return {run_id: reason for run_id, reason in conn.execute(stmt)}

    def add_event(self, event: Mapping[str, Any]) -> None:
        """Store one event (needs ``run_id``, ``seq``, ``type``)."""
        with self.engine.begin() as conn:
            conn.execute(_event_insert(event))
            _notify(conn, event["run_id"])

    def get(self, run_id: str) -> dict[str, Any] | None:
        """The record of ``run_id``, or None."""
        with self.engine.connect() as conn:
            text = conn.execute(select(runs.c.record).where(runs.c.id == run_id)).scalar()
        return None if text is None else dict(json.loads(text))

    def events(self, run_id: str, after: int = 0) -> list[dict[str, Any]]:
        """Events of ``run_id`` with a sequence number above ``after``, in order."""
        stmt = (
            select(run_events.c.event)
            .where(run_events.c.run_id == run_id, run_events.c.seq > after)
            .order_by(run_events.c.seq)
        )
        with self.engine.connect() as conn:
            return [json.loads(text) for text in conn.execute(stmt).scalars()]

    def recent(self, limit: int = 50, *, user: str | None = None) -> list[dict[str, Any]]:
        """The newest run records first.

        Args:
            limit: At most this many.
            user: Only this user's runs (``anonymous``: also those made without a user);
                None: everyone's.
        """
        stmt = select(runs.c.record).order_by(runs.c.created_at.desc()).limit(max(1, limit))
        if user is not None:
            stmt = stmt.where(owned_by(runs.c.user, user))
        with self.engine.connect() as conn:
            return [json.loads(text) for text in conn.execute(stmt).scalars()]

    def stale(self, before: datetime) -> list[dict[str, Any]]:
        """Records of runs not final and last touched before ``before`` (their process died)."""
        stmt = select(runs.c.record).where(
            runs.c.state.in_(_UNFINISHED), runs.c.updated_at < before
        )
        with self.engine.connect() as conn:
            return [json.loads(text) for text in conn.execute(stmt).scalars()]


_UNFINISHED = ("queued", "running", "waiting_input")


def _notify(conn: Connection, payload: str) -> None:
    """Tell the replicas listening on ``tooldeck_runs`` (delivered when the transaction commits)."""
    if conn.dialect.name == "postgresql":
        conn.execute(text("select pg_notify('tooldeck_runs', :payload)"), {"payload": payload})


def _event_insert(event: Mapping[str, Any]) -> Any:
    return insert(run_events).values(
        run_id=event["run_id"],
        seq=event["seq"],
        type=event["type"],
        event=json.dumps(redact(dict(event)), default=str),
    )


def _write_run(
    conn: Connection,
    record: Mapping[str, Any],
    *,
    created_at: datetime | None = None,
    stale_before: datetime | None = None,
) -> bool:
    """Update the run's row to ``record``, else insert it (``created_at``, default now).

    With ``stale_before``, only a stored, unfinished run last touched before then is
    updated, and nothing is inserted: False when nothing was written.
    """
    now = datetime.now(UTC)
    values = {
        "updated_at": now,
        "state": record["state"],
        "record": json.dumps(redact(dict(record)), default=str),
    }
    where = [runs.c.id == record["run_id"]]
    if stale_before is not None:
        where += [runs.c.updated_at < stale_before, runs.c.state.in_(_UNFINISHED)]
    if conn.execute(update(runs).where(*where).values(**values)).rowcount:
        return True
    if stale_before is not None:
        return False
    conn.execute(
        insert(runs).values(
            id=record["run_id"],
            created_at=created_at or now,
            question=redact_text(record["question"]),
            profile=record.get("profile"),
            user=record.get("user"),
            **values,
        )
    )
    return True


def _when(value: Any) -> datetime | None:
    """An ISO 8601 time (a run record's ``created_at``) as a datetime; None if it is not one."""
    try:
        return datetime.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        return None
