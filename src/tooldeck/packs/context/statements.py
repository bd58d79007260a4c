"""Parsed OFX/QFX statements, shared by every process of a project and parsed in batches.

Each CLI call, each ``tooldeck chat`` and each server starts without the parses of the
last (issue 55: 25 small statements, one killable process each, missed the 10 s
deadline in 6 of 7 cold CLI calls on a loaded machine). So:

- **Kept on disk, by content.** A parse is kept as JSON under the project's data dir
  (``cache/statements/<parser>/<sha256 of the file and its name>.json``): any process
  reads it back instead of parsing. ``<parser>`` is a hash of the parser's own source
  (``ofx.py`` and this file), so a changed parser never serves an old parse; a kept
  file of another shape is parsed again. Only the parse is kept, before the user's
  categories apply, so editing ``categories`` needs no new parse.
- **Parsed in one process.** The files that are not kept are read and parsed together
  in one killable process (``core.isolated``) with one file's limits, never read whole
  in the server; if that process passes a limit or dies (a file built to exhaust the
  parser), each of them is parsed alone, so the bad file costs only its own limits and
  is named alone. Only regular files are read.

A kept parse is written by this process from the isolated parser's answer (with
``os.replace``, never half-written); the data dir is the user's own.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path
from stat import S_ISREG
from typing import Any

from tooldeck.core.isolated import IsolatedProcesses, IsolationError, ProcessLimits
from tooldeck.packs.context import ofx
from tooldeck.packs.context.adapter import SourceError

__all__ = ["StatementParses", "parse_statements"]

Parse = dict[str, Any]
"""One file's ``OfxStatements`` as a dict (``transactions`` without categories)."""


def parse_statements(paths: Sequence[Path]) -> list[Parse | str]:
    """Each file's statements, or why it is not a statement (run in a killable process).

    The file is read here, in the process whose memory and time are bounded, never in
    the server.

    Returns:
        One per file, in order: ``{"transactions", "investments", "positions",
        "accounts", "balances", "skipped"}`` (``ofx.read_statements``), or the message
        of a file that cannot be read, holds no ``<OFX>`` element or cannot be decoded.
    """
    found: list[Parse | str] = []
    for path in paths:
        name = path.name
        try:
            read = ofx.read_statements(path.read_bytes(), name)
        except (OSError, ValueError) as exc:
            found.append(f"{name} is not a readable OFX statement: {exc}")
            continue
        found.append(
            {
                "transactions": read.transactions,
                "investments": read.investments,
                "positions": read.positions,
                "accounts": read.accounts,
                "balances": read.balances,
                "skipped": read.skipped,
            }
        )
    return found


@cache
def _parser_id() -> str:
    """The parser's identity: a hash of its source, ``ofx.py`` and this file's."""
    digest = hashlib.sha256(Path(ofx.__file__).read_bytes())
    digest.update(Path(__file__).read_bytes())
    return digest.hexdigest()[:16]


_KEYS = ("transactions", "investments", "positions", "accounts", "balances", "skipped")


class StatementParses:
    """Statement parses by file: in memory, on disk (``folder``), else parsed in a batch.

    Args:
        folder: Where parses are kept for other processes (``<data_dir>/cache/
            statements``); None keeps them in this process only.
        processes: Gives the pool that parses (called on the first parse).
        limits: One file's limits; a batch runs under them too.
    """

    def __init__(
        self,
        folder: Path | None,
        processes: Callable[[], IsolatedProcesses],
        limits: ProcessLimits,
    ) -> None:
        self.folder = folder / _parser_id() if folder is not None else None
        self.processes = processes
        self.limits = limits
        self._memory: dict[Path, tuple[tuple[int, int], Parse]] = {}

    def read(self, paths: Sequence[Path]) -> list[Parse | SourceError]:
        """Each file's parse, or the ``SourceError`` saying why it cannot be read; blocking.

        Only regular files are read (a FIFO or a device named by mistake would block or
        never end). A file is hashed here in chunks (bounded memory, whatever its size)
        and read whole only by the parsing process, under its limits. The key is the
        file's name with its content: the name is part of a parse (ids of entries
        without one, the messages of ``skipped``).
        """
        found: dict[int, Parse | SourceError] = {}
        wanted: list[tuple[int, Path, tuple[int, int], str]] = []
        for index, path in enumerate(paths):
            try:
                stat = path.stat()
                if not S_ISREG(stat.st_mode):
                    found[index] = SourceError(f"statement {path} is not a regular file")
                    continue
                stamp = (stat.st_mtime_ns, stat.st_size)
                kept = self._memory.get(path)
                if kept is not None and kept[0] == stamp:
                    found[index] = kept[1]
                    continue
                with path.open("rb") as file:
                    digest = hashlib.file_digest(file, "sha256")
                digest.update(b"\0" + path.name.encode("utf-8", "surrogateescape"))
            except FileNotFoundError:
                found[index] = SourceError(f"statement not found: {path}")
                continue
            except OSError as exc:
                found[index] = SourceError(f"statement {path} could not be read: {exc}")
                continue
            key = digest.hexdigest()
            on_disk = self._load(key)
            if on_disk is not None:
                self._memory[path] = (stamp, on_disk)
                found[index] = on_disk
            else:
                wanted.append((index, path, stamp, key))
        parses = self._parse([path for _, path, _, _ in wanted])
        for (index, path, stamp, key), parse in zip(wanted, parses, strict=True):
            if isinstance(parse, dict):
                self._memory[path] = (stamp, parse)
                self._keep(key, parse)
            found[index] = parse
        return [found[i] for i in range(len(paths))]

    def _parse(self, paths: list[Path]) -> list[Parse | SourceError]:
        """``paths`` parsed in one process; alone each when that process failed."""
        if not paths:
            return []
        try:
            parsed = self.processes().call(parse_statements, paths, limits=self.limits)
        except IsolationError as exc:
            if len(paths) == 1:
                return [SourceError(f"reading {paths[0].name} {exc}")]
            return [one for path in paths for one in self._parse([path])]
        return [_outcome(p) for p in parsed]

    def _load(self, digest: str) -> Parse | None:
        if self.folder is None:
            return None
        try:
            kept = json.loads((self.folder / f"{digest}.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        shaped = isinstance(kept, dict) and all(isinstance(kept.get(k), list) for k in _KEYS)
        return kept if shaped else None  # anything else is parsed again

    def _keep(self, digest: str, parse: Parse) -> None:
        """Write the parse for other processes; a failure only costs them a parse."""
        if self.folder is None:
            return
        target = self.folder / f"{digest}.json"
        pending = self.folder / f".{digest}-{secrets.token_hex(4)}"
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            pending.write_text(json.dumps(parse), encoding="utf-8")
            os.replace(pending, target)
        except OSError:
            pending.unlink(missing_ok=True)


def _outcome(parse: Parse | str) -> Parse | SourceError:
    return SourceError(parse) if isinstance(parse, str) else parse
