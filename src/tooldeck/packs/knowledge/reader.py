"""``DocumentReader``: a stranger's file read in a killable process, ingested off the loop.

An uploaded document is parsed by ``parse_bytes`` in a child process
(``core.isolated``) with a deadline and a memory bound from ``[knowledge]``
(``parse_timeout_s``, ``parse_memory_mb``, ``max_blocks``), at most ``parse_workers``
at once; a limit hit, a parser crash or any parser exception becomes a
``DocumentError`` that names the file and the limit. Parsing and storing (embedding
included) run in daemon threads of the reader's own, so an upload never occupies the
event loop's default executor (routing, ``get_document``, the context tool use it)
and a stopping server does not wait for one.
"""

from __future__ import annotations

import asyncio
import functools
import re
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel, Field, ValidationError

from tooldeck.core.isolated import IsolatedProcesses, IsolationError, ProcessLimits
from tooldeck.packs.knowledge.config import KnowledgeConfig
from tooldeck.packs.knowledge.parse import DocumentError, ParsedDocument, parse_bytes

__all__ = ["DocumentReader", "Upload"]


class Upload(BaseModel):
    """A file to add: its name (the suffix says its kind) and its bytes in base64."""

    name: str = Field(min_length=1, max_length=255, pattern=r"^[^/\\\x00]+$")
    content_base64: str = Field(min_length=1)


T = TypeVar("T")

_PRELOAD = ("tooldeck.packs.knowledge.parse", "pypdf", "docx", "lxml.html", "markdown_it")
"""Imported once by the fork server, so a parse starts warm (~10 ms)."""

_LIMIT_SETTING = {"timeout_s": "parse_timeout_s", "memory_mb": "parse_memory_mb"}


class DocumentReader:
    """Parses documents under limits, one killable process each (module docstring).

    Args:
        config: ``[knowledge]``: ``max_file_mb``, ``max_blocks``, ``parse_timeout_s``,
            ``parse_memory_mb``, ``parse_workers``.
    """

    def __init__(self, config: KnowledgeConfig) -> None:
        self.config = config
        self.limits = ProcessLimits(
            timeout_s=config.parse_timeout_s, memory_mb=config.parse_memory_mb
        )
        self.processes = IsolatedProcesses(config.parse_workers, _PRELOAD)
        self._ingests: asyncio.Semaphore | None = None

    @property
    def max_bytes(self) -> int:
        """The largest file read, in bytes (``[knowledge] max_file_mb``)."""
        return self.config.max_file_mb * 1024 * 1024

    def read_upload(self, body: bytes) -> tuple[str, ParsedDocument]:
        """An ``Upload``'s JSON ``body``: its name and the parsed file; blocks its thread.

        The JSON, the base64 and the file are all read in the child process: a 50 MB
        upload holds no lock of the server's (Python's GIL included) while it is read.

        Raises:
            DocumentError: the body is not an ``Upload``, the content is not base64, or
                the file cannot be read (as ``read``).
        """
        return self._call(_read_upload, body, _upload_name(body))

    def read(self, data: bytes, name: str) -> ParsedDocument:
        """Parse ``data`` (a file called ``name``) in a child process; blocks its thread.

        Raises:
            DocumentError: the file cannot be read (``parse_bytes``'s reasons), or
                reading it passed a limit or crashed the reader; the message names the
                file and the setting that bounds it.
        """
        if len(data) > self.max_bytes:  # refused before a process is started
            raise DocumentError(
                f"{name}: {len(data) / 1e6:.0f} MB is over the {self.config.max_file_mb} MB "
                "limit ([knowledge] max_file_mb)"
            )
        return self._call(parse_bytes, data, name)

    def _call(self, func: Callable[..., T], data: bytes, name: str) -> T:
        try:
            work = functools.partial(
                func, max_bytes=self.max_bytes, max_blocks=self.config.max_blocks
            )
            return self.processes.call(work, data, name, limits=self.limits)
        except DocumentError as exc:
            if name in str(exc):
                raise
            raise DocumentError(f"{name}: {exc}") from None
        except IsolationError as exc:
            setting = _LIMIT_SETTING.get(exc.limit or "")
            where = f" ([knowledge] {setting})" if setting else ""
            raise DocumentError(f"{name}: reading it {exc}{where}") from None
        except Exception as exc:  # a parser's own error type: the file, not the server
            raise DocumentError(f"{name} cannot be read: {type(exc).__name__}: {exc}") from None

    async def run(self, work: Callable[[], T]) -> T:
        """``work()`` in a daemon thread of the reader's own; at most ``parse_workers`` at once.

        Raises:
            Exception: whatever ``work`` raised.
        """
        if self._ingests is None:
            self._ingests = asyncio.Semaphore(self.config.parse_workers)
        async with self._ingests:
            loop = asyncio.get_running_loop()
            done: asyncio.Future[T] = loop.create_future()

            def target() -> None:
                try:
                    outcome: tuple[bool, Any] = (True, work())
                except BaseException as exc:  # handed to the awaiting coroutine
                    outcome = (False, exc)
                if not loop.is_closed():
                    loop.call_soon_threadsafe(_settle, done, outcome)

            threading.Thread(target=target, name="tooldeck-ingest", daemon=True).start()
            return await done

    def close(self) -> None:
        """Kill the parses still running (their callers get a ``DocumentError``)."""
        self.processes.close()

    async def aclose(self) -> None:
        """``close``, for the runtime's service shutdown."""
        self.close()


def _read_upload(
    body: bytes, label: str, *, max_bytes: int, max_blocks: int
) -> tuple[str, ParsedDocument]:
    """``DocumentReader.read_upload``'s work, in the child process."""
    import base64
    import binascii

    try:
        upload = Upload.model_validate_json(body)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'body'}: {e['msg']}"
            for e in exc.errors(include_url=False)
        )
        raise DocumentError(f"{label} is not {{name, content_base64}}: {problems}") from None
    try:
        data = base64.b64decode(upload.content_base64, validate=True)
    except (binascii.Error, ValueError):
        raise DocumentError(f"{upload.name}: content_base64 is not valid base64") from None
    try:
        parsed = parse_bytes(data, upload.name, max_bytes=max_bytes, max_blocks=max_blocks)
    except DocumentError as exc:
        if upload.name in str(exc):
            raise
        raise DocumentError(f"{upload.name}: {exc}") from None
    return upload.name, parsed


def _upload_name(body: bytes) -> str:
    """The ``name`` of an upload's JSON body, found without parsing it (for messages)."""
    for part in (body[:4096], body[-4096:]):
        found = re.search(rb'"name"\s*:\s*"([^"\\]{1,255})"', part)
        if found:
            return found.group(1).decode("utf-8", "replace")
    return "the upload"


def _settle(done: asyncio.Future[Any], outcome: tuple[bool, Any]) -> None:
    if done.done():
        return
    ok, value = outcome
    if ok:
        done.set_result(value)
    else:
        done.set_exception(value)
