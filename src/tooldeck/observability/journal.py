"""The audit journal: an acknowledged call's record, appended to a file before it answers.

With ``[audit] durability = "ack"`` a call answers only once its record would survive
a kill of the process. A SQLite commit of the indexed row costs 40-60 µs; copying one
line into a file mapped into memory (``mmap``, ``MAP_SHARED``) costs well under 1 µs:
the page belongs to the kernel's page cache, so the line is in the file whatever
happens to the process next. (``os.write`` would do too, but it lets go of the GIL, and
the writer thread then takes it at every call: 25 µs of thread switching per call on
two cores, ``benchmarks/overhead.py``.) So the caller copies the serialised, redacted
row here and answers; the audit's writer thread moves the rows into the database in
batches (``AuditStore.flush``) and then deletes the file they were journalled in. Like
SQLite's WAL with ``synchronous=NORMAL``, this is safe against a crash of the process,
not of the machine (no ``fsync`` per call).

A segment's space is written with zeros before it is mapped, and grown the same way,
so a full disk is an ``OSError`` (the call then waits for a commit) rather than a
``SIGBUS`` on a page that has nowhere to go. Zeros rather than ``posix_fallocate``:
space that was only reserved makes each page's first write to the map a fault that
converts it (100 KB of lines: 116-256 µs against 17 µs, paid by the callers), and
freeing it on close cost 90-160 µs against 16. The writer thread makes the next
segment ahead (``prepare``), so a rotation under the callers' lock is a swap. The
file ends in zero bytes after the last line; a line cut short by a kill in the middle
of the copy was never acknowledged and is skipped.

Layout: ``<folder>/<pid>-<token>-<n>.jsonl``, one *segment* per writer batch. The
segment being written is held with an exclusive ``flock`` for the life of the process;
when the writer takes a batch it starts a new segment (``rotate``) under the same lock
as the callers' appends, so every line of the old segment is in the batch it took. A
process killed with lines still journalled leaves its segments unlocked (the kernel
drops the locks); the next ``AuditStore`` on the same database (the next start, or any
other tooldeck process within the hour) finds them with ``orphans`` and stores them.
A segment whose batch was committed is named in the database in the same transaction
(``tool_call_journal``), so one found again after a crash between the commit and its
deletion is not stored twice.

POSIX only (``fcntl.flock``): elsewhere ``Journal.open`` returns None and acknowledged
calls wait for the writer's group commit instead.
"""

from __future__ import annotations

import contextlib
import json
import logging
import mmap
import os
import secrets
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]

from tooldeck.core.private import not_private
from tooldeck.observability.row_text import compact_encoder

__all__ = ["Journal", "Segment"]

SEGMENT_BYTES = 1 << 18
"""A segment's first allocation (256 KiB, ~650 small rows: a writer batch of 256 rows
fits); doubled while a row does not fit."""

log = logging.getLogger("tooldeck.audit")

_encode = compact_encoder(ascii_only=True)
"""ASCII output: a lone surrogate in a string survives the round trip as an escape."""


@dataclass(kw_only=True)
class Segment:
    """One journal file: its name (the key its batch is stored under), descriptor, map."""

    path: Path
    fd: int
    map: mmap.mmap | None = None
    """The file mapped for writing (the current segment only)."""
    name: str = field(init=False)

    def __post_init__(self) -> None:
        self.name = self.path.name

    def write(self, line: bytes) -> bool:
        """Copy ``line`` in after the last one; False when no space can be allocated."""
        mapped = self.map
        if mapped is None:
            return False
        try:
            mapped.write(line)  # at the map's position, which it moves on
        except ValueError:  # past the end: grow the file, then write
            end = mapped.tell() + len(line)
            size = len(mapped)
            while size < end:
                size *= 2
            try:
                _allocate(self.fd, size)
                mapped.resize(size)
            except (OSError, ValueError, SystemError):
                return False
            mapped.write(line)
        return True

    @property
    def used(self) -> int:
        """Bytes written so far (0 once the segment is let go of)."""
        return 0 if self.map is None else self.map.tell()

    def rows(self) -> tuple[list[list[Any]], list[str]]:
        """The rows journalled in this segment, and the lines that do not parse.

        A line is a JSON array of column values; the data ends at the first zero byte
        (JSON text never holds one). A last line without its newline was being copied
        when the process died: it was never acknowledged and is left out. A line that
        does not parse otherwise is returned as text.
        """
        with os.fdopen(os.dup(self.fd), "rb") as fh:
            fh.seek(0)
            data = fh.read()
        data = data.split(b"\0", 1)[0]
        lines = data.split(b"\n")
        if lines[-1]:
            log.warning("audit: %s ends in a line cut short (never acknowledged)", self.name)
        rows: list[list[Any]] = []
        bad: list[str] = []
        for line in lines[:-1]:
            try:
                row = json.loads(line)
            except ValueError:
                row = None
            if isinstance(row, list):
                rows.append(row)
            elif line.strip():
                bad.append(line.decode("utf-8", "replace"))
        return rows, bad

    def delete(self) -> None:
        """Remove the file, then let go of it (unlinked first: nobody can take it after)."""
        with contextlib.suppress(OSError):
            self.path.unlink()
        self.release()

    def release(self) -> None:
        """Let go of the file and keep it (its rows are not stored yet: stored later).

        Idempotent: a descriptor is closed once (closing a number twice could close
        whatever file was given that number since).
        """
        if self.map is not None:
            self.map.close()
            self.map = None
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


class Journal:
    """The segments of one process; see the module docstring.

    Semantics:
        ``append`` and ``rotate`` are called with ``lock`` held: the audit store
        appends a line and queues its row under it, and rotates and takes the queued
        rows under it, so a line and its row always travel together.
    """

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.lock = threading.Lock()
        self._prefix = f"{os.getpid()}-{secrets.token_hex(4)}"
        self._count = 0
        self.retired = False
        """True once ``retire`` handed the last segment over: appends are refused."""
        self.segment = self._new_segment()
        self._next: Segment | None = None
        """The segment ``rotate`` will swap in, made ahead by ``prepare``."""

    @classmethod
    def open(cls, folder: Path) -> Journal | None:
        """A journal in ``folder`` (created 0700), or None where it cannot work.

        None on a platform without ``flock``, when the folder cannot be made or written,
        and when another user owns it or may write in it (their files would be stored
        as this user's calls): the reason is logged, and the store then commits before
        answering.
        """
        if fcntl is None:
            return None
        try:
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            why = not_private(folder)
            if why is not None:
                log.warning("audit: no journal in %s: it %s (chmod 700 it)", folder, why)
                return None
            return cls(folder)
        except OSError as exc:
            log.warning("audit: no journal in %s (%s); calls wait for commits", folder, exc)
            return None

    def _new_segment(self) -> Segment:
        """A new segment file, locked, allocated and mapped.

        Raises:
            OSError: it cannot be created or allocated (a full disk).
        """
        self._count += 1
        path = self.folder / f"{self._prefix}-{self._count:06d}.jsonl"
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            _allocate(fd, SEGMENT_BYTES)
            mapped = mmap.mmap(fd, SEGMENT_BYTES)
        except (OSError, ValueError):
            os.close(fd)
            with contextlib.suppress(OSError):
                path.unlink()
            raise
        return Segment(path=path, fd=fd, map=mapped)

    def append(self, row: tuple[Any, ...]) -> bool:
        """Append one row as a line (caller holds ``lock``); False when it could not be."""
        if self.retired:
            return False
        return self.segment.write((_encode(row) + "\n").encode())

    def prepare(self) -> None:
        """Make the segment the next ``rotate`` swaps in, unless there is one (writer only).

        Called without ``lock``: the zeros are written while callers go on appending.

        Raises:
            OSError: it cannot be created (``rotate`` tries again).
        """
        if self._next is None and not self.retired:
            self._next = self._new_segment()

    def rotate(self) -> Segment | None:
        """Start a new segment (caller holds ``lock``); the old one, or None if it is empty.

        Raises:
            OSError: the new segment cannot be created (the old one stays current).
        """
        if self.segment.used == 0:
            return None
        new, self._next = self._next or self._new_segment(), None
        old, self.segment = self.segment, new
        return old

    def retire(self) -> Segment:
        """Refuse appends from now on (caller holds ``lock``); the last segment."""
        self.retired = True
        self._drop_next()
        return self.segment

    def orphans(self) -> Iterator[Segment]:
        """Segments of processes that are gone, each locked by us until deleted or released.

        A segment still locked belongs to a live process (or to this one) and is
        skipped; so is one deleted while we opened it (its rows were stored), and one
        another user owns.
        """
        for path in sorted(self.folder.glob("*.jsonl")):
            if path == self.segment.path:
                continue
            try:
                fd = os.open(path, os.O_RDONLY)
            except OSError:
                continue  # deleted meanwhile
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                st = os.fstat(fd)
                if st.st_nlink == 0 or st.st_uid != os.geteuid():  # stored; not ours
                    raise BlockingIOError
            except OSError:
                os.close(fd)
                continue
            yield Segment(path=path, fd=fd)

    def close(self) -> None:
        """Delete the current segment if it is empty; otherwise keep it for recovery."""
        with self.lock:
            if self.retired:
                return  # its segment was handed over
            self.retired = True
            self._drop_next()
            if self.segment.used == 0:
                self.segment.delete()
            else:
                self.segment.release()

    def _drop_next(self) -> None:
        """Delete the segment made ahead, which holds nothing."""
        if self._next is not None:
            self._next.delete()
            self._next = None


def _allocate(fd: int, size: int) -> None:
    """Give the file ``size`` bytes of disk now, so that writing them later cannot fail.

    Raises:
        OSError: there is no room (``ENOSPC``) or the file system refuses.
    """
    have = os.fstat(fd).st_size  # zeros, not posix_fallocate: see the module docstring
    while have < size:
        have += os.pwrite(fd, bytes(min(size - have, 1 << 20)), have)
