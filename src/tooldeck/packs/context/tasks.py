"""Tasks: a todo.txt file (the format of todotxt.org), or the to-dos of iCalendar files.

todo.txt: each line is a task: ``x`` marks it done, ``(A)`` its priority, dates are
``YYYY-MM-DD``, ``+project`` and ``@context`` words tag it, ``due:YYYY-MM-DD`` sets its
due day. iCalendar (RFC 5545 ``VTODO``, what CalDAV task lists export): ``SUMMARY``
is the text, ``DUE`` the due day (in the user's zone), ``STATUS:COMPLETED`` or
``CANCELLED`` (or a ``COMPLETED`` time) marks it done, ``PRIORITY`` 1-9 becomes A-C
(RFC 5545 §3.8.1.9 maps 1-9 to A1…C3), ``CATEGORIES`` are its projects.

Both become ``{text, done, priority, due, projects, contexts, line}`` (``line``: the
task's place in its source).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Mapping, Sequence
from datetime import date, datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from tooldeck.core.isolated import IsolatedProcesses, IsolationError, ProcessLimits
from tooldeck.packs.context.adapter import ContextAdapter, SourceError
from tooldeck.packs.context.calendar import CALENDAR_PARSERS
from tooldeck.packs.context.ical import ical_file, read_files

__all__ = ["IcalTasksAdapter", "TodoTxtAdapter", "normalize_tasks", "parse_todo_line", "read_todos"]

_PRIORITY = re.compile(r"^\(([A-Z])\)\s+")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}\s+")


def parse_todo_line(line: str, number: int) -> dict[str, Any] | None:
    """One todo.txt line as a task, or None for a blank line."""
    text = line.strip()
    if not text:
        return None
    done = text.startswith("x ")
    if done:
        text = text[2:].lstrip()
        text = _DATE.sub("", text, count=1)  # completion date
    priority = None
    found = _PRIORITY.match(text)
    if found:
        priority, text = found.group(1), text[found.end() :]
    text = _DATE.sub("", text, count=1)  # creation date
    due_match = re.search(r"\bdue:(\d{4}-\d{2}-\d{2})\b", text)
    words = text.split()
    return {
        "text": " ".join(w for w in words if not w.startswith("due:")),
        "done": done,
        "priority": priority,
        "due": due_match.group(1) if due_match else None,
        "projects": [w[1:] for w in words if w.startswith("+") and len(w) > 1],
        "contexts": [w[1:] for w in words if w.startswith("@") and len(w) > 1],
        "line": number,
    }


class TodoTxtAdapter(ContextAdapter):
    """The tasks of a todo.txt file.

    Args:
        path: The file.
        today: The user's day (tests fix it); overdue and due-today are counted from it.
    """

    category = "tasks"
    platform = "todo.txt"

    def __init__(self, path: Path, today: Callable[[], date] | None = None) -> None:
        self.path = path
        self.today = today or date.today

    async def read(self) -> tuple[list[dict[str, Any]], int, dict[str, Any]]:
        """Every task of the file.

        Raises:
            SourceError: the file is missing.
        """
        if not self.path.is_file():
            raise SourceError(f"todo.txt not found: {self.path}")
        text = await asyncio.to_thread(self.path.read_text, "utf-8", "replace")
        lines = text.splitlines()
        tasks = [t for n, line in enumerate(lines, 1) if (t := parse_todo_line(line, n))]
        return tasks, len(tasks), {}

    def normalize_for_tools(
        self, records: Sequence[Mapping[str, Any]], *, include_alerts: bool = True
    ) -> dict[str, Any]:
        """Open tasks by priority then due day; overdue and due-today ones as alerts."""
        return normalize_tasks(records, self.today(), include_alerts=include_alerts)


class IcalTasksAdapter(ContextAdapter):
    """The to-dos (``VTODO``) of iCalendar files.

    Args:
        paths: The files (a CalDAV task list's export, or a calendar with to-dos).
        timezone: The user's zone (IANA name): due days are in it.
        today: The user's day (tests fix it).
        timeout_s: Seconds for parsing every file (in a killable process).
        max_bytes: Largest file read.
        processes: Where parsing runs; None: a pool of the adapter's own.
    """

    category = "tasks"
    platform = "ical"

    def __init__(
        self,
        paths: Sequence[Path],
        timezone: str = "UTC",
        today: Callable[[], date] | None = None,
        timeout_s: float = 10.0,
        max_bytes: int = 10 * 1024 * 1024,
        processes: IsolatedProcesses | None = None,
    ) -> None:
        self.paths = list(paths)
        self.timezone = timezone
        self.today = today or date.today
        self.timeout_s = timeout_s
        self.max_bytes = max_bytes
        self.processes = processes

    async def read(self) -> tuple[list[dict[str, Any]], int, dict[str, Any]]:
        """Every to-do of the files; what was left out or repaired in ``skipped``/``relaxed``.

        Raises:
            SourceError: no file could be read (missing, too large, not iCalendar), or
                parsing passed the deadline.
        """
        texts, unread = [], []
        for path in self.paths:
            try:
                texts.append(await asyncio.to_thread(ical_file, str(path), self.max_bytes))
            except SourceError as exc:
                unread.append(str(exc))
        if not texts:
            raise SourceError("; ".join(unread) or "no task file configured")
        if self.processes is None:
            self.processes = IsolatedProcesses(1, CALENDAR_PARSERS)
        limits = ProcessLimits(timeout_s=self.timeout_s, memory_mb=512)
        try:
            tasks, report = await asyncio.to_thread(
                self.processes.call, read_todos, texts, self.timezone, limits=limits
            )
        except IsolationError as exc:
            raise SourceError(f"reading {', '.join(n for n, _ in texts)} {exc}") from None
        report["skipped"] = unread + report["skipped"]
        return tasks, len(tasks), report

    def normalize_for_tools(
        self, records: Sequence[Mapping[str, Any]], *, include_alerts: bool = True
    ) -> dict[str, Any]:
        """Open tasks by priority then due day; overdue and due-today ones as alerts."""
        return normalize_tasks(records, self.today(), include_alerts=include_alerts)


def read_todos(
    texts: list[tuple[str, bytes]], timezone: str
) -> tuple[list[dict[str, Any]], dict[str, list[str]]]:
    """The to-dos of ``texts`` (``(name, bytes)``) as task records (module docstring).

    Runs in a killable process (``IcalTasksAdapter.read``); each file is read leniently
    (``ical.read_calendars``), a file that is not iCalendar is named in ``skipped``.

    Returns:
        The tasks, and ``{"skipped": [...], "relaxed": [...]}``.

    Raises:
        SourceError: no file is iCalendar.
    """
    zone = ZoneInfo(timezone)
    tasks: list[dict[str, Any]] = []
    reads, report = read_files(texts)
    for _, read in reads:
        for calendar in read.calendars:
            for todo in calendar.walk("VTODO"):
                due = todo.get("DUE").dt if todo.get("DUE") is not None else None
                if isinstance(due, datetime):
                    due = (due if due.tzinfo else due.replace(tzinfo=zone)).astimezone(zone)
                status = str(todo.get("STATUS", "")).upper()
                done = status in ("COMPLETED", "CANCELLED") or todo.get("COMPLETED") is not None
                tasks.append({
                    "text": str(todo.get("SUMMARY", "")).strip(),
                    "done": done,
                    "priority": _priority(todo.get("PRIORITY")),
                    "due": due.isoformat()[:10] if due is not None else None,
                    "projects": _categories(todo.get("CATEGORIES")),
                    "contexts": [],
                    "line": len(tasks) + 1,
                })  # fmt: skip
    return tasks, report


def _priority(value: Any) -> str | None:
    """RFC 5545 ``PRIORITY`` 1-3 → A, 4-6 → B, 7-9 → C; 0, absent or unreadable → None."""
    try:
        number = int(value)
    except (TypeError, ValueError):
        return None
    return "ABC"[(number - 1) // 3] if 1 <= number <= 9 else None


def _categories(value: Any) -> list[str]:
    """``CATEGORIES`` (one property or several, each a list) as plain names."""
    found: list[str] = []
    for item in value if isinstance(value, list) else [value] if value is not None else []:
        found += [str(c) for c in getattr(item, "cats", [item])]
    return found


def normalize_tasks(
    records: Sequence[Mapping[str, Any]], today: date, *, include_alerts: bool = True
) -> dict[str, Any]:
    """Open tasks by priority then due day; overdue and due-today ones as alerts.

    Returns:
        ``{"summary": {open, done, overdue, due_today, next}, "alerts": [...]}``;
        ``next`` holds the first 10 open tasks.
    """
    day = today.isoformat()
    open_tasks = sorted(
        (t for t in records if not t["done"]),
        key=lambda t: (t["priority"] or "~", t["due"] or "9999", t["line"]),
    )
    overdue = [t for t in open_tasks if t["due"] and t["due"] < day]
    due_today = [t for t in open_tasks if t["due"] == day]
    shaped: dict[str, Any] = {
        "summary": {
            "open": len(open_tasks),
            "done": sum(1 for t in records if t["done"]),
            "overdue": len(overdue),
            "due_today": len(due_today),
            "next": [dict(t) for t in open_tasks[:10]],
        }
    }
    if include_alerts:
        shaped["alerts"] = [f"overdue since {t['due']}: {t['text']}" for t in overdue] + [
            f"due today: {t['text']}" for t in due_today
        ]
    return shaped
