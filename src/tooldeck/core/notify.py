"""Wake-ups between processes sharing a PostgreSQL: ``LISTEN`` here, ``NOTIFY`` from writers.

Replicas on ``[store] url`` see each other's changes by reading the database; without
a wake-up they would have to poll. A writer sends ``pg_notify(channel, key)`` in the
transaction that changes a row (``tooldeck_runs`` with a run id when a run's record or
events change, ``tooldeck_approvals`` with an approval id when an approval does);
PostgreSQL delivers it to every listening connection when the transaction commits.
``Notifications`` holds one listening connection per process, in a thread, and calls
the callbacks subscribed to a channel on their event loop.

Polling stays as the fallback: a notification is lost while the connection is down
(it reconnects every second), so readers still look every few seconds.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["Notifications"]

log = logging.getLogger("tooldeck.notify")

Callback = Callable[[str], None]
"""Called on its event loop with the notification's payload (a key: a run or approval id)."""


class Notifications:
    """One process's ``LISTEN`` connection to a PostgreSQL (module docstring).

    Args:
        url: A ``postgresql://`` URL.

    Semantics:
        ``subscribe`` from a running event loop; the first subscription starts the
        listening thread. ``connected`` is False until it listens (and while it
        reconnects): readers then poll more often.
    """

    def __init__(self, url: str) -> None:
        self.url = url
        self.connected = False
        self._subscribers: dict[str, list[tuple[asyncio.AbstractEventLoop, Callback]]] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._listening: set[str] = set()

    def subscribe(self, channel: str, callback: Callback) -> None:
        """Call ``callback(payload)`` on the current event loop for each notification."""
        loop = asyncio.get_running_loop()
        with self._lock:
            self._subscribers.setdefault(channel, []).append((loop, callback))
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._listen, name="tooldeck-notify", daemon=True
                )
                self._thread.start()

    def close(self) -> None:
        """Stop listening (within a second)."""
        self._stop.set()
        thread = self._thread
        if thread is not None:
            thread.join(timeout=5)

    def _listen(self) -> None:
        import psycopg

        while not self._stop.is_set():
            try:
                with psycopg.connect(self.url, autocommit=True, connect_timeout=5) as conn:
                    self._listening = set()
                    while not self._stop.is_set():
                        self._listen_to_new(conn)
                        self.connected = True
                        for note in conn.notifies(timeout=1.0):
                            self._deliver(note.channel, note.payload)
            except Exception as exc:  # the server went away: poll meanwhile, reconnect
                log.warning("notifications: %s; reconnecting", str(exc).splitlines()[0])
            self.connected = False
            self._stop.wait(1.0)

    def _listen_to_new(self, conn: Any) -> None:
        with self._lock:
            channels = set(self._subscribers) - self._listening
        for channel in channels:
            conn.execute(f'LISTEN "{channel}"')
            self._listening.add(channel)

    def _deliver(self, channel: str, payload: str) -> None:
        with self._lock:
            subscribers = list(self._subscribers.get(channel, ()))
        for loop, callback in subscribers:
            if not loop.is_closed():
                loop.call_soon_threadsafe(callback, payload)
