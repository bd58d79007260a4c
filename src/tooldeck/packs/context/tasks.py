"""Tasks: a todo.txt file (the format of todotxt.org).

Each line is a task: ``x`` marks it done, ``(A)`` its priority, dates are
``YYYY-MM-DD``, ``+project`` and ``@context`` words tag it, ``due:YYYY-MM-DD`` sets its
due day. Tasks become ``{text, done, priority, due, projects, contexts, line}``.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Mapping, Sequence
from datetime import date
from pathlib import Path
from typing import Any

from tooldeck.packs.context.adapter import ContextAdapter, SourceError

__all__ = ["TodoTxtAdapter", "parse_todo_line"]

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
        today = self.today().isoformat()
        open_tasks = sorted(
            (t for t in records if not t["done"]),
            key=lambda t: (t["priority"] or "~", t["due"] or "9999", t["line"]),
        )
        overdue = [t for t in open_tasks if t["due"] and t["due"] < today]
        due_today = [t for t in open_tasks if t["due"] == today]
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
