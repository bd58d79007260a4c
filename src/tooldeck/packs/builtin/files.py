"""``files``: read, write, list and search files inside the allowed roots (seed 001).

Example::

    await tool.execute({"action": "read", "path": "notes/todo.md"})
    await tool.execute({"action": "search", "query": "TODO", "glob": "*.py"})
"""

from __future__ import annotations

import fnmatch
import os
import stat
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import regex
from pydantic import BaseModel, Field

from tooldeck.core.composite import ActionStrategy, CompositeTool
from tooldeck.core.context import ToolContext
from tooldeck.core.definition import ToolAnnotations
from tooldeck.core.names import closest_names
from tooldeck.exceptions import InvalidArgumentsError, ToolDeniedError, ToolFailure
from tooldeck.packs.builtin.config import FilesConfig
from tooldeck.packs.builtin.roots import Roots

__all__ = ["FilesTool", "decode_text"]

_SNIFF_BYTES = 8192
_PATH_CHARS = 4096
_GLOB_CHARS = 256
"""Globs are translated to regular expressions in time that grows fast with length."""
_SEARCH_S = 5.0
"""Budget of one search's regular-expression matching, in seconds."""
_BOMS = (
    (b"\xff\xfe\x00\x00", "utf-32"),
    (b"\x00\x00\xfe\xff", "utf-32"),
    (b"\xff\xfe", "utf-16"),
    (b"\xfe\xff", "utf-16"),
)


def decode_text(data: bytes, encoding: str | None = None) -> tuple[str, str] | None:
    """``(text, encoding)`` of ``data``, or None when it is binary.

    Semantics:
        With ``encoding`` given, decode with it (errors: ``UnicodeDecodeError``).
        Otherwise: a UTF-16/32 byte-order mark decides; else a NUL byte in the first
        8 KiB means binary; else UTF-8 (with or without BOM) is tried, then
        ``charset_normalizer``'s guess. Among its equally good guesses windows-1252
        wins, the most common legacy encoding (WHATWG reads latin-1 as it too).
    """
    if encoding is not None:
        return data.decode(encoding), encoding
    for bom, name in _BOMS:
        if data.startswith(bom):
            try:
                return data.decode(name), name
            except UnicodeDecodeError:
                return None
    if b"\x00" in data[:_SNIFF_BYTES]:
        return None
    try:
        return data.decode("utf-8-sig"), "utf-8"
    except UnicodeDecodeError:
        pass
    from charset_normalizer import from_bytes

    matches = list(from_bytes(data))
    if not matches:
        return None
    best = matches[0]
    tied = [m for m in matches if (m.chaos, m.coherence) == (best.chaos, best.coherence)]
    chosen = next((m for m in tied if m.encoding == "cp1252"), best)
    return str(chosen), chosen.encoding


class ReadRequest(BaseModel):
    """Arguments of ``read``."""

    path: str = Field(
        max_length=_PATH_CHARS, description="File to read, relative to the first root or absolute."
    )
    encoding: str | None = Field(
        None, max_length=40, description="Text encoding; default: detected."
    )


class WriteRequest(BaseModel):
    """Arguments of ``write``."""

    path: str = Field(
        max_length=_PATH_CHARS,
        description="File to write; missing parent directories are created.",
    )
    content: str = Field(max_length=5_000_000, description="The text to write.")
    overwrite: bool = Field(False, description="Replace the file if it exists.")
    encoding: str = Field("utf-8", max_length=40, description="Text encoding of the file.")


class ListRequest(BaseModel):
    """Arguments of ``list``."""

    path: str = Field(".", max_length=_PATH_CHARS, description="Directory to list.")
    pattern: str = Field(
        "*", max_length=_GLOB_CHARS, description="Glob on entry names, e.g. `*.py`."
    )
    recursive: bool = Field(False, description="Descend into subdirectories.")
    include_hidden: bool = Field(False, description="Include names starting with a dot.")


class SearchRequest(BaseModel):
    """Arguments of ``search``."""

    query: str = Field(min_length=1, max_length=1000, description="Text to find in file contents.")
    path: str = Field(".", max_length=_PATH_CHARS, description="Directory to search under.")
    glob: str = Field(
        "*", max_length=_GLOB_CHARS, description="Only files whose name matches, e.g. `*.md`."
    )
    regex: bool = Field(False, description="Treat `query` as a regular expression.")
    case_sensitive: bool = Field(False, description="Match case.")


class _FilesAction(ActionStrategy):
    def __init__(self, roots: Roots, config: FilesConfig) -> None:
        self.roots = roots
        self.config = config

    def entry(self, path: Path) -> dict[str, Any]:
        kind = "symlink" if path.is_symlink() else "dir" if path.is_dir() else "file"
        size = path.lstat().st_size if kind == "file" else None
        return {"path": self.roots.relative(path), "type": kind, "size_bytes": size}

    def existing(self, path: str, field: str = "path") -> Path:
        real = self.roots.resolve(path, field=field)
        if not real.exists():
            parent = real.parent
            names = sorted(p.name for p in parent.iterdir()) if parent.is_dir() else []
            hint = closest_names(real.name, names)
            raise InvalidArgumentsError.for_field(
                field,
                f"{path!r} does not exist"
                + (f"; did you mean {hint[0]!r}?" if hint else "")
                + (f" Entries there: {', '.join(names[:20])}" if names else ""),
            )
        return real


class Read(_FilesAction):
    """Read a text file (encoding detected)."""

    name = "read"
    description = "Read a text file."
    RequestModel = ReadRequest

    def run(self, request: ReadRequest, ctx: ToolContext) -> dict[str, Any]:
        """Return ``{path, encoding, size_bytes, content}``."""
        path = self.existing(request.path)
        if path.is_dir():
            raise InvalidArgumentsError.for_field(
                "path", f"{request.path!r} is a directory; use action 'list'"
            )
        limit = self.config.max_read_bytes
        size, data = _read_regular(self.roots, path, limit, request.path)
        if size > limit:
            raise InvalidArgumentsError.for_field(
                "path",
                f"{request.path!r} is {size} bytes, over the read limit of {limit} bytes "
                "(files.max_read_bytes); search it instead, or raise the limit",
                size_bytes=size,
                limit_bytes=limit,
            )
        try:
            decoded = decode_text(data, request.encoding)
        except (ValueError, LookupError) as exc:  # UnicodeDecodeError; a NUL in the name
            raise InvalidArgumentsError.for_field(
                "encoding", f"cannot decode {request.path!r}: {exc}"
            ) from None
        if decoded is None:
            raise InvalidArgumentsError.for_field(
                "path", f"{request.path!r} is a binary file; only text files can be read"
            )
        text, encoding = decoded
        return {
            "path": self.roots.relative(path),
            "encoding": encoding,
            "size_bytes": size,
            "content": text,
        }


class Write(_FilesAction):
    """Write a text file (needs confirmation)."""

    name = "write"
    description = "Write a text file (creates parent directories inside the root)."
    RequestModel = WriteRequest
    requires_confirmation = True

    def run(self, request: WriteRequest, ctx: ToolContext) -> dict[str, Any]:
        """Return ``{path, size_bytes, created}``."""
        path = self.roots.resolve(request.path)
        try:
            data = request.content.encode(request.encoding)
        except (ValueError, LookupError) as exc:  # UnicodeEncodeError; a NUL in the name
            raise InvalidArgumentsError.for_field("encoding", str(exc)) from None
        if len(data) > self.config.max_write_bytes:
            raise InvalidArgumentsError.for_field(
                "content",
                f"{len(data)} bytes is over the write limit of {self.config.max_write_bytes} "
                "bytes (files.max_write_bytes)",
            )
        if path.is_dir():
            raise InvalidArgumentsError.for_field("path", f"{request.path!r} is a directory")
        existed = path.exists()
        if existed and not request.overwrite:
            raise InvalidArgumentsError.for_field(
                "overwrite", f"{request.path!r} exists; pass overwrite=true to replace it"
            )
        flags = os.O_WRONLY | os.O_CREAT | (0 if request.overwrite else os.O_EXCL)
        fd = self.roots.open(path, flags, make_parents=True)
        try:
            _plain(os.fstat(fd), request.path)  # before truncating: never an outside file
            os.ftruncate(fd, 0)
            with os.fdopen(fd, "wb", closefd=False) as file:
                file.write(data)
        finally:
            os.close(fd)
        return {"path": self.roots.relative(path), "size_bytes": len(data), "created": not existed}


class List(_FilesAction):
    """List a directory."""

    name = "list"
    description = "List the entries of a directory."
    RequestModel = ListRequest

    def run(self, request: ListRequest, ctx: ToolContext) -> dict[str, Any]:
        """Return ``{path, entries: [{path, type, size_bytes}], truncated}``."""
        base = self.existing(request.path)
        if not base.is_dir():
            raise InvalidArgumentsError.for_field("path", f"{request.path!r} is not a directory")
        entries: list[dict[str, Any]] = []
        truncated = False
        for directory, names in _walk(self.roots, base, request.recursive, request.include_hidden):
            for name in names:
                if fnmatch.fnmatch(name, request.pattern):
                    if len(entries) >= self.config.max_results:
                        truncated = True
                        break
                    entries.append(self.entry(directory / name))
            if truncated:
                break
        return {"path": self.roots.relative(base), "entries": entries, "truncated": truncated}


class Search(_FilesAction):
    """Search file contents."""

    name = "search"
    description = "Find lines containing text (or a regex) in files under a directory."
    RequestModel = SearchRequest

    def run(self, request: SearchRequest, ctx: ToolContext) -> dict[str, Any]:
        """Return ``{matches: [{path, line, text}], files_searched, truncated}``."""
        base = self.existing(request.path)
        flags = 0 if request.case_sensitive else regex.IGNORECASE
        try:
            pattern = regex.compile(
                request.query if request.regex else regex.escape(request.query), flags
            )
        except regex.error as exc:
            raise InvalidArgumentsError.for_field(
                "query", f"not a valid regular expression: {exc}"
            ) from None
        deadline = time.monotonic() + _SEARCH_S
        matches: list[dict[str, Any]] = []
        searched = 0
        for directory, names in _walk(self.roots, base, True, False):
            for name in names:
                path = directory / name
                if not fnmatch.fnmatch(name, request.glob) or path.is_symlink():
                    continue
                try:
                    size, data = _read_regular(self.roots, path, self.config.max_read_bytes)
                except (ToolFailure, OSError):  # not a plain file: skipped, like a symlink
                    continue
                if size > self.config.max_read_bytes:
                    continue
                decoded = decode_text(data)
                if decoded is None:
                    continue
                searched += 1
                for number, line in enumerate(decoded[0].splitlines(), 1):
                    if _found(pattern, line, deadline, request.query):
                        if len(matches) >= self.config.max_results:
                            return {
                                "matches": matches,
                                "files_searched": searched,
                                "truncated": True,
                            }
                        matches.append(
                            {"path": self.roots.relative(path), "line": number, "text": line[:500]}
                        )
        return {"matches": matches, "files_searched": searched, "truncated": False}


def _read_regular(
    roots: Roots, path: Path, limit: int, shown: str | None = None
) -> tuple[int, bytes]:
    """``(size, content)`` of a plain file (no content over ``limit`` bytes).

    Opened through ``Roots.open`` (no symlink followed), non-blocking, and checked on
    the open descriptor (``_plain``), so a FIFO (whose read would wait forever), a
    device or a hard link that may lead outside the roots is refused, even one
    swapped in after a check.

    Raises:
        InvalidArgumentsError: not a plain file; ToolDeniedError: a hard link or a
            swapped symlink; OSError: it cannot be opened.
    """
    fd = roots.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        info = os.fstat(fd)
        _plain(info, shown or str(path))
        if info.st_size > limit:
            return info.st_size, b""
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb", closefd=False) as file:
            return info.st_size, file.read(limit)
    finally:
        os.close(fd)


def _plain(info: os.stat_result, shown: str) -> None:
    """Refuse what is not a regular file with one name (``os.fstat`` of an open file).

    Raises:
        InvalidArgumentsError: a FIFO, socket or device.
        ToolDeniedError: a file with several hard links: one of its other names may be
            outside the roots, so it is neither read nor written.
    """
    if not stat.S_ISREG(info.st_mode):
        raise InvalidArgumentsError.for_field(
            "path",
            f"{shown!r} is not a regular file (a FIFO, socket or device); only regular "
            "files can be read or written",
        )
    if info.st_nlink > 1:
        raise ToolDeniedError(
            f"{shown!r} has {info.st_nlink} hard links; one may be outside the allowed "
            "roots, so files tool does not read or write it"
        )


def _found(pattern: regex.Pattern[str], line: str, deadline: float, query: str) -> bool:
    """``pattern.search(line)`` within the search's time budget.

    ``regex`` runs with the GIL released (``concurrent``) and stops at the timeout,
    so a catastrophic pattern such as ``(a+)+$`` costs at most the budget, not the
    server.

    Raises:
        InvalidArgumentsError: the budget is spent.
    """
    try:
        return (
            pattern.search(line, timeout=max(deadline - time.monotonic(), 0.001), concurrent=True)
            is not None
        )
    except TimeoutError:
        raise InvalidArgumentsError.for_field(
            "query",
            f"the search for {query!r} took longer than {_SEARCH_S:g} s (a regular "
            "expression with nested repetition backtracks without end); simplify it",
        ) from None


def _walk(
    roots: Roots, base: Path, recursive: bool, hidden: bool
) -> Iterator[tuple[Path, list[str]]]:
    """``(directory, sorted entry names)`` pairs, without the roots' excluded directories.

    Symlinked directories are not followed.
    """
    for directory, dirs, files in os.walk(base, followlinks=False):
        if not hidden:
            dirs[:] = [d for d in dirs if not d.startswith(".")]
            files = [f for f in files if not f.startswith(".")]
        if roots.excluded:
            dirs[:] = [d for d in dirs if not roots.is_excluded(Path(directory, d).resolve())]
        dirs.sort()
        yield Path(directory), sorted([*dirs, *files])
        if not recursive:
            return


class FilesTool(CompositeTool):
    """Reads, writes, lists and searches files inside the allowed roots.

    Semantics:
        Every path goes through ``Roots.resolve``: anything resolving outside the
        roots (``..``, absolute paths, symlinks pointing out) is ``denied``. ``read``
        detects the encoding, refuses binary files and files over
        ``max_read_bytes`` with a ``validation`` error saying so. ``write`` needs
        confirmation (``confirm_actions``), creates parent directories (inside the
        root, by construction) and replaces a file only with ``overwrite=true``.
        ``list`` and ``search`` do not follow symlinks and stop at ``max_results``.
        Files are opened through ``Roots.open`` (no symlink followed, even one
        swapped in after the check); FIFOs, sockets and devices are ``validation``
        errors and files with several hard links ``denied`` (their other names may
        be outside the roots); ``search`` skips both.
    """

    labels = ("private",)  # the user's files (providers.flow)

    name = "files"
    source_id = "tool:files:v1"
    description = (
        "Read, write, list and search files in the allowed directories. Actions: read "
        "(path), write (path, content, overwrite), list (path, pattern, recursive), "
        "search (query, path, glob, regex). Only regular files with a single hard link "
        "are read or written."
    )
    annotations = ToolAnnotations(title="Files", read_only=False, destructive=True)
    tags = ("builtin", "files")

    def __init__(self, config: FilesConfig, roots: Roots) -> None:
        super().__init__(
            [Read(roots, config), Write(roots, config), List(roots, config), Search(roots, config)]
        )
