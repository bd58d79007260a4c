"""Schedules and their fires in one SQLite file (``<data_dir>/schedules.db``, ``0600``).

Every process of a data dir shares the file: the server, ``tooldeck mcp`` and the CLI;
with ``[store] url``, every replica shares the tables in PostgreSQL (``SharedDb``).
A fire is **claimed** in one transaction that also moves the schedule's next fire, so
of two processes running schedulers exactly one runs each fire. A claimed fire that
its process never finished (killed) is claimed again after ``stale_s``; its call then
carries the same idempotency key, so the receipts layer answers the first attempt's
result, or says its outcome is unknown, instead of running the tool twice.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from tooldeck.core.shared_db import SharedDb
from tooldeck.packs.schedules.triggers import Trigger

__all__ = ["Fire", "Misfire", "Schedule", "ScheduleStore"]

Misfire = Literal["once", "all", "skip"]
"""Fires missed while nothing ran (the server was down): run one (``once``), each
(``all``, up to a cap) or none (``skip``)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Schedule:
    """A tool call made on a schedule, as stored."""

    id: str
    """Unique id (16 hex digits)."""
    owner: str
    """The principal whose call it is (its audit rows, its credentials, its view)."""
    name: str
    """The owner's name for it, unique per owner."""
    tool: str
    """The tool to call."""
    arguments: dict[str, Any]
    """Its arguments, as at creation."""
    profile: str | None
    """The profile whose view the call goes through."""
    trigger: Trigger
    """When it fires."""
    misfire: Misfire = "once"
    """What to do with fires missed while nothing ran."""
    paused: bool = False
    """Paused schedules do not fire (missed fires are not made up on resume)."""
    approved_hash: str | None = None
    """``arguments_hash(tool, arguments)`` when the creating call was approved: a fire
    of a tool that needs confirmation runs without asking again, for exactly these
    arguments."""
    approved_by: str | None = None
    """Whose approved call created it, and through which channel (``ann via rest``)."""
    created_at: float = 0.0
    """Unix time (s)."""
    next_run_at: float | None = None
    """Unix time (s) of the next fire; None: no more (an ``at`` that fired)."""
    last_run_at: float | None = None
    """Unix time (s) of the last fire that ran."""
    last_status: str | None = None
    """``success`` or the error type of the last fire's call."""
    last_request_id: str | None = None
    """The last fire's call (its audit row)."""
    runs: int = 0
    """Fires run."""
    missed: int = 0
    """Fires not run because of the misfire policy."""

    def as_dict(self) -> dict[str, Any]:
        """JSON-able form (REST, CLI, the ``list_schedules`` tool)."""
        return {
            "id": self.id,
            "name": self.name,
            "owner": self.owner,
            "tool": self.tool,
            "arguments": self.arguments,
            "profile": self.profile,
            "trigger": self.trigger.describe(),
            "misfire": self.misfire,
            "paused": self.paused,
            "approved_by": self.approved_by,
            "created_at": _iso(self.created_at),
            "next_run_at": _iso(self.next_run_at),
            "last_run_at": _iso(self.last_run_at),
            "last_status": self.last_status,
            "last_request_id": self.last_request_id,
            "runs": self.runs,
            "missed": self.missed,
        }


@dataclass(frozen=True, slots=True)
class Fire:
    """One fire of a schedule to run: the schedule as claimed, and the fire's time."""

    schedule: Schedule
    at: float
    """The Unix time (s) the fire was due (what its idempotency key names)."""


class ScheduleStore:
    """Schedules in a SQLite file shared by the processes of one data dir, or in PostgreSQL.

    Args:
        path: The database file, created ``0600`` in a ``0700`` folder.
        url: A ``postgresql://`` URL shared by every replica (``[store] url``); wins
            over ``path``.

    Raises:
        ConfigError: the file or its folder is another user's or writable by others,
            or not a SQLite database; ``url``'s server cannot be reached.
    """

    def __init__(self, path: Path, url: str | None = None) -> None:
        self.path = path
        if url is not None:
            self._db = SharedDb.postgres(url, "schedules", Path(__file__).with_name("migrations"))
        else:
            risk = "whoever can write it can make calls run"
            self._db = SharedDb.sqlite(path, "the schedule store", risk, _SCHEMA)

    def add(self, schedule: Schedule) -> Schedule:
        """Store a new schedule (its ``id`` made here); returns it as stored.

        Raises:
            ValueError: the owner has a schedule of that name (the message says how to
                replace it).
        """
        stored = replace(schedule, id=secrets.token_hex(8))
        try:
            self._db.execute(_INSERT, _row(stored))
        except self._db.IntegrityError:
            raise ValueError(
                f"a schedule named {schedule.name!r} exists; remove it first or choose another name"
            ) from None
        return stored

    def owned_by(self, owner: str | None = None) -> list[Schedule]:
        """Schedules of ``owner`` (None: everyone's), by name."""
        if owner is None:
            rows = self._db.execute(f"SELECT {_COLUMNS} FROM schedules ORDER BY owner, name")
        else:
            rows = self._db.execute(
                f"SELECT {_COLUMNS} FROM schedules WHERE owner = ? ORDER BY name", (owner,)
            )
        return [_schedule(r) for r in rows]

    def get(self, owner: str, name: str) -> Schedule | None:
        """The schedule ``name`` of ``owner``, or None."""
        rows = self._db.execute(
            f"SELECT {_COLUMNS} FROM schedules WHERE owner = ? AND name = ?", (owner, name)
        )
        return _schedule(rows[0]) if rows else None

    def by_id(self, schedule_id: str) -> Schedule | None:
        """The schedule with id ``schedule_id``, or None."""
        rows = self._db.execute(f"SELECT {_COLUMNS} FROM schedules WHERE id = ?", (schedule_id,))
        return _schedule(rows[0]) if rows else None

    def set_paused(self, owner: str, name: str, paused: bool, now: float) -> Schedule | None:
        """Pause or resume; resuming moves the next fire to the first one after ``now``."""
        with self._db.transaction() as db:
            row = db.execute(
                f"SELECT {_COLUMNS} FROM schedules WHERE owner = ? AND name = ?",
                (owner, name),
            ).fetchone()
            if row is None:
                return None  # nothing changed: the empty transaction commits
            schedule = _schedule(row)
            following = schedule.next_run_at
            if not paused and schedule.paused:
                following = schedule.trigger.next_after(now)
            db.execute(
                "UPDATE schedules SET paused = ?, next_run_at = ? WHERE id = ?",
                (int(paused), following, schedule.id),
            )
        return replace(schedule, paused=paused, next_run_at=following)

    def remove(self, owner: str, name: str) -> bool:
        """Delete the schedule and its fires; False when there was none."""
        with self._db.transaction() as db:
            schedule = db.execute(
                "SELECT id FROM schedules WHERE owner = ? AND name = ?", (owner, name)
            ).fetchone()
            if schedule is None:
                return False
            db.execute("DELETE FROM fires WHERE schedule_id = ?", schedule)
            db.execute("DELETE FROM schedules WHERE id = ?", schedule)
        return True

    def next_due(self) -> float | None:
        """The earliest next fire of any active schedule (Unix s), or None."""
        rows = self._db.execute("SELECT min(next_run_at) FROM schedules WHERE paused = 0")
        return None if not rows or rows[0][0] is None else float(rows[0][0])

    def claim_due(
        self, now: float, *, grace_s: float, stale_s: float, cap: int = 100
    ) -> list[Fire]:
        """Claim the fires due at ``now``; move each schedule's next fire past ``now``.

        A fire later than ``grace_s`` counts as missed and follows the schedule's
        misfire policy: ``once`` runs the latest missed fire (when no fire is on time),
        ``all`` each (at most ``cap``), ``skip`` none. Fires claimed more than ``stale_s``
        ago and never finished (their process ended) are claimed again.
        """
        fires: list[Fire] = []
        with self._db.transaction() as db:
            due = db.execute(
                f"SELECT {_COLUMNS} FROM schedules "
                "WHERE paused = 0 AND next_run_at IS NOT NULL AND next_run_at <= ?",
                (now,),
            ).fetchall()
            for row in due:
                schedule = _schedule(row)
                times, following, skipped = _fires(schedule, now, grace_s, cap)
                db.execute(
                    "UPDATE schedules SET next_run_at = ?, missed = missed + ? WHERE id = ?",
                    (following, skipped, schedule.id),
                )
                for at in times:
                    db.execute(
                        "INSERT INTO fires (schedule_id, fire_at, claimed_at, status)"
                        " VALUES (?, ?, ?, 'claimed') ON CONFLICT DO NOTHING",
                        (schedule.id, at, now),
                    )
                    fires.append(Fire(schedule, at))
            stale = db.execute(
                f"SELECT {', '.join('s.' + c for c in _COLUMN_NAMES)}, f.fire_at "
                "FROM fires f JOIN schedules s ON s.id = f.schedule_id "
                "WHERE f.status = 'claimed' AND f.claimed_at < ?",
                (now - stale_s,),
            ).fetchall()
            for row in stale:
                schedule = _schedule(row[:-1])
                db.execute(
                    "UPDATE fires SET claimed_at = ? WHERE schedule_id = ? AND fire_at = ?",
                    (now, schedule.id, row[-1]),
                )
                fires.append(Fire(schedule, float(row[-1])))
        return fires

    def finish(self, fire: Fire, status: str, request_id: str, now: float) -> None:
        """Record a fire's outcome (``success`` or an error type) on it and its schedule."""
        with self._db.transaction() as db:
            db.execute(
                "UPDATE fires SET status = ?, request_id = ? WHERE schedule_id = ? AND fire_at = ?",
                (status, request_id, fire.schedule.id, fire.at),
            )
            db.execute(
                "UPDATE schedules SET last_run_at = ?, last_status = ?, "
                "last_request_id = ?, runs = runs + 1 WHERE id = ?",
                (now, status, request_id, fire.schedule.id),
            )

    def close(self) -> None:
        """Close the database connection."""
        self._db.close()

    async def aclose(self) -> None:
        """``close`` (the runtime closes services that have ``aclose``)."""
        self.close()


def _fires(
    schedule: Schedule, now: float, grace_s: float, cap: int
) -> tuple[list[float], float | None, int]:
    """(fire times to run, the next fire after ``now``, fires skipped) for a due schedule."""
    trigger = schedule.trigger
    due: list[float] = []
    at: float | None = schedule.next_run_at
    while at is not None and at <= now and len(due) < cap:
        due.append(at)
        at = trigger.next_after(at)
    beyond = 0
    if at is not None and at <= now:  # more missed than the cap: count roughly, jump ahead
        beyond = 1
        at = trigger.next_after(now)
    on_time = [t for t in due if now - t <= grace_s]
    late = [t for t in due if now - t > grace_s]
    if schedule.misfire == "all":
        run = due
    elif schedule.misfire == "once":
        run = on_time or late[-1:]
    else:
        run = on_time
    return run, at, len(due) - len(run) + beyond


def _iso(t: float | None) -> str | None:
    return None if t is None else datetime.fromtimestamp(t, UTC).isoformat(timespec="seconds")


_COLUMN_NAMES = (
    "id",
    "owner",
    "name",
    "tool",
    "arguments",
    "profile",
    "trigger_kind",
    "trigger_value",
    "timezone",
    "misfire",
    "paused",
    "approved_hash",
    "approved_by",
    "created_at",
    "next_run_at",
    "last_run_at",
    "last_status",
    "last_request_id",
    "runs",
    "missed",
)
_COLUMNS = ", ".join(_COLUMN_NAMES)
_INSERT = f"INSERT INTO schedules ({_COLUMNS}) VALUES ({', '.join('?' for _ in _COLUMN_NAMES)})"
_SCHEMA = """
PRAGMA journal_mode=WAL;
CREATE TABLE IF NOT EXISTS schedules (
    id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    name TEXT NOT NULL,
    tool TEXT NOT NULL,
    arguments TEXT NOT NULL,
    profile TEXT,
    trigger_kind TEXT NOT NULL,
    trigger_value TEXT NOT NULL,
    timezone TEXT,
    misfire TEXT NOT NULL,
    paused INTEGER NOT NULL DEFAULT 0,
    approved_hash TEXT,
    approved_by TEXT,
    created_at DOUBLE PRECISION NOT NULL,
    next_run_at DOUBLE PRECISION,
    last_run_at DOUBLE PRECISION,
    last_status TEXT,
    last_request_id TEXT,
    runs INTEGER NOT NULL DEFAULT 0,
    missed INTEGER NOT NULL DEFAULT 0,
    UNIQUE (owner, name)
);
CREATE INDEX IF NOT EXISTS schedules_next ON schedules (next_run_at);
CREATE TABLE IF NOT EXISTS fires (
    schedule_id TEXT NOT NULL,
    fire_at DOUBLE PRECISION NOT NULL,
    claimed_at DOUBLE PRECISION NOT NULL,
    status TEXT NOT NULL,
    request_id TEXT,
    PRIMARY KEY (schedule_id, fire_at)
);
CREATE INDEX IF NOT EXISTS fires_status ON fires (status, claimed_at);
"""


def _row(s: Schedule) -> tuple[Any, ...]:
    return (
        s.id,
        s.owner,
        s.name,
        s.tool,
        json.dumps(s.arguments, sort_keys=True),
        s.profile,
        s.trigger.kind,
        s.trigger.value,
        s.trigger.timezone,
        s.misfire,
        int(s.paused),
        s.approved_hash,
        s.approved_by,
        s.created_at,
        s.next_run_at,
        s.last_run_at,
        s.last_status,
        s.last_request_id,
        s.runs,
        s.missed,
    )


def _schedule(row: tuple[Any, ...]) -> Schedule:
    values = dict(zip(_COLUMN_NAMES, row, strict=True))
    trigger = Trigger(
        values.pop("trigger_kind"), values.pop("trigger_value"), values.pop("timezone")
    )
    values["arguments"] = json.loads(values["arguments"])
    values["paused"] = bool(values["paused"])
    return Schedule(trigger=trigger, **values)
