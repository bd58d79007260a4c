"""Each user's own context sources: files they upload, read only for them (issue 28).

The sources in ``tooldeck.toml`` are the single-user default: they serve the
``[context] owners`` (``anonymous`` by default: a caller without an identity, as on
one machine). Every other principal (``X-User`` behind a trusted proxy) reads only the
files they uploaded: a statement (``.ofx``, ``.qfx``), a calendar (``.ics``) or a
``todo.txt``. Uploads, never paths: a remote user cannot make the server read
``/etc/passwd`` by naming it as their statement.

Layout: ``<data_dir>/sources/<sha256 of the principal>/<category>/<name>``, folders
0700 and files 0600; a principal's name never becomes a path. Bounded: ``max_bytes``
a file and ``max_files`` a user. The files are parsed like configured ones: in a
killable process with a deadline and a memory bound (``core.isolated``).
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from tooldeck.exceptions import InvalidArgumentsError
from tooldeck.packs.context.adapter import ContextAdapter
from tooldeck.packs.context.bridge import ContextBridge

__all__ = ["KINDS", "ContextBridges", "SourceFile", "UserSources"]

KINDS = ("finance", "calendar", "tasks")
"""The categories a user can upload a file for: a statement (OFX/QFX), a calendar
(iCalendar) or a todo.txt; the category, not the name, says how a file is read."""
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._ -]{0,99}$")


@dataclass(frozen=True, kw_only=True)
class SourceFile:
    """One uploaded file (its content is never part of a listing)."""

    category: str
    name: str
    bytes: int
    uploaded_at: str
    """ISO 8601, UTC."""
    path: Path
    modified_ns: int
    """The file's mtime in ns: a replaced file is read anew."""

    @property
    def source_id(self) -> str:
        """How results from it are cited: ``context:<category>:upload:<name>``."""
        return f"context:{self.category}:upload:{self.name}"


class UserSources:
    """The uploaded source files of every principal, under ``root`` (see the module docstring).

    Args:
        root: ``<data_dir>/sources``.
        max_bytes: Largest file a user may upload.
        max_files: Most files one user may have.
    """

    def __init__(self, root: Path, *, max_bytes: int = 10_000_000, max_files: int = 20) -> None:
        self.root = root
        self.max_bytes = max_bytes
        self.max_files = max_files

    def add(self, principal: str, category: str, name: str, content: bytes) -> SourceFile:
        """Store (or replace) ``name`` in the principal's ``category``.

        Raises:
            InvalidArgumentsError: an unknown category, a name that is not a plain file
                name, a file over ``max_bytes``, or one file more than ``max_files``.
        """
        if category not in KINDS:
            raise InvalidArgumentsError.for_field(
                "category",
                f"{category!r}: a file can serve {', '.join(KINDS)}",
                allowed=list(KINDS),
            )
        if not _NAME.match(name):
            raise InvalidArgumentsError.for_field(
                "name", f"{name!r}: a plain file name (letters, digits, . _ - and spaces)"
            )
        if len(content) > self.max_bytes:
            raise InvalidArgumentsError.for_field(
                "content", f"{len(content)} bytes; a source file holds at most {self.max_bytes}"
            )
        folder = self._folder(principal) / category
        target = folder / name
        if not target.exists() and len(self.files(principal)) >= self.max_files:
            raise InvalidArgumentsError(
                f"you have {self.max_files} source files, the most kept; delete one first"
            )
        self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
        for made in (folder.parent, folder):  # 0700 each: parents=True would use the umask
            made.mkdir(mode=0o700, exist_ok=True)
        pending = folder / f".{name}.{os.getpid()}.part"
        descriptor = os.open(pending, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "wb") as out:
            out.write(content)
        os.replace(pending, target)  # a reader sees the old file or the new one
        return self._info(category, target)

    def files(self, principal: str) -> list[SourceFile]:
        """The principal's files, by category then name."""
        folder = self._folder(principal)
        found = []
        for category in KINDS:
            directory = folder / category
            if directory.is_dir():
                found += [
                    self._info(category, p)
                    for p in sorted(directory.iterdir())
                    if p.is_file() and not p.name.startswith(".")
                ]
        return found

    def delete(self, principal: str, category: str, name: str) -> bool:
        """Delete one of the principal's files; whether it existed."""
        if category not in KINDS or not _NAME.match(name):
            return False
        try:
            (self._folder(principal) / category / name).unlink()
        except FileNotFoundError:
            return False
        return True

    def _folder(self, principal: str) -> Path:
        return self.root / hashlib.sha256(principal.encode()).hexdigest()[:32]

    @staticmethod
    def _info(category: str, path: Path) -> SourceFile:
        stat = path.stat()
        return SourceFile(
            category=category,
            name=path.name,
            bytes=stat.st_size,
            uploaded_at=datetime.fromtimestamp(stat.st_mtime, UTC).isoformat(timespec="seconds"),
            path=path,
            modified_ns=stat.st_mtime_ns,
        )


class ContextBridges:
    """The bridge each principal reads (see the module docstring).

    An owner reads the configured sources, the adapters other packs offer
    (``extra``: installed modules' context adapters) and their own files; anyone else
    their own files only.

    Args:
        configured: The bridge of ``tooldeck.toml``'s sources.
        owners: The principals the configured sources serve.
        uploads: The users' own files; None: only the configured sources exist.
        adapters: Makes the adapters that read a user's files.
        extra: The adapters other packs offer now (``core.extensions``).
    """

    def __init__(
        self,
        configured: ContextBridge,
        owners: Sequence[str],
        uploads: UserSources | None = None,
        adapters: Callable[[list[SourceFile]], list[ContextAdapter]] | None = None,
        extra: Callable[[], Sequence[ContextAdapter]] = tuple,
    ) -> None:
        self.configured = configured
        self.owners = frozenset(owners)
        self.uploads = uploads
        self.adapters = adapters
        self.extra = extra
        self._empty = ContextBridge([], ttl_s=configured.ttl_s, timeout_s=configured.timeout_s)
        self._made: dict[str, tuple[object, ContextBridge]] = {}

    def for_principal(self, principal: str) -> ContextBridge:
        """The caller's bridge (see the class docstring); made again when a file changes."""
        owner = principal in self.owners
        extra = list(self.extra()) if owner else []
        files = self.uploads.files(principal) if self.uploads and self.adapters else []
        if not files and not extra:
            return self.configured if owner else self._empty
        # a cached bridge holds its adapters, so their ids cannot be reused while it lives
        key = (tuple(map(id, extra)), tuple((f.path, f.bytes, f.modified_ns) for f in files))
        made = self._made.get(principal)
        if made is not None and made[0] == key:
            return made[1]
        own = self.adapters(files) if files and self.adapters else []
        bridge = (
            self.configured.with_adapters([*extra, *own])  # the configured results shared
            if owner
            else ContextBridge(
                own, ttl_s=self.configured.ttl_s, timeout_s=self.configured.timeout_s
            )
        )
        self._made[principal] = (key, bridge)
        return bridge
