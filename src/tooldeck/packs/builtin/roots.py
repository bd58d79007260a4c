"""Allowed roots: every path a built-in tool touches must resolve inside one of them."""

from __future__ import annotations

import errno
import os
from collections.abc import Sequence
from pathlib import Path

from tooldeck.exceptions import InvalidArgumentsError, ToolDeniedError

__all__ = ["Roots"]


class Roots:
    """A set of directories; ``resolve`` maps a caller's path into them or refuses it.

    Semantics:
        A relative path is taken from the first root. The path is resolved as the OS
        would (``..`` collapsed, every symlink followed, a missing tail kept as is), and
        the result must lie inside a root, also resolved; so ``../x``, ``/etc/passwd``
        and a symlink inside a root that points out are all ``denied``. The check is
        made before the tool acts; a symlink swapped in between check and use is not
        covered (run tools under their own user for that).

        A path inside one of ``excluded`` (tooldeck's own data folder, which holds the
        credential store, approvals and history) is ``denied`` even within a root, and
        listings leave it out.

    Args:
        roots: The allowed directories (need not exist yet).
        excluded: Directories inside the roots that no tool reaches.
    """

    def __init__(self, roots: Sequence[Path], excluded: Sequence[Path] = ()) -> None:
        if not roots:
            raise ValueError("at least one root directory is needed")
        self.roots = tuple(Path(r).expanduser().resolve() for r in roots)
        self.excluded = tuple(Path(e).expanduser().resolve() for e in excluded)

    def is_excluded(self, real: Path) -> bool:
        """Whether the resolved path ``real`` lies in an excluded directory."""
        return any(real == e or real.is_relative_to(e) for e in self.excluded)

    def resolve(self, path: str | Path, *, field: str = "path") -> Path:
        """The real path of ``path``, checked to be inside a root.

        Raises:
            InvalidArgumentsError: the path is empty, holds a NUL byte, has a name too
                long for the file system or loops through symlinks.
            ToolDeniedError: it resolves outside every root; the message names the
                roots.
        """
        text = str(path)
        if not text or "\x00" in text:
            raise InvalidArgumentsError(
                f"{field} must be a non-empty path without NUL bytes, got {text!r}",
                details={"errors": [{"field": field, "message": "invalid path"}]},
            )
        candidate = Path(text)
        if not candidate.is_absolute():
            candidate = self.roots[0] / candidate
        try:
            real = candidate.resolve()
            real.lstat()
        except FileNotFoundError:
            pass  # a path to create (files write) or to report missing, by the caller
        except (OSError, RuntimeError) as exc:  # a name too long, a symlink loop
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            raise InvalidArgumentsError(
                f"{field} {text[:200]!r} cannot be used: {reason}",
                details={"errors": [{"field": field, "message": reason}]},
            ) from None
        if not any(real == root or real.is_relative_to(root) for root in self.roots):
            raise ToolDeniedError(
                f"{field} {text!r} resolves to {real}, which is outside the allowed roots "
                f"({', '.join(map(str, self.roots))}); use a path inside them",
                details={"path": text, "resolved": str(real), "roots": list(map(str, self.roots))},
            )
        if self.is_excluded(real):
            raise ToolDeniedError(
                f"{field} {text!r} is inside tooldeck's own data folder, which no tool reaches "
                "(it holds the credential store, approvals and history)",
                details={"path": text, "resolved": str(real)},
            )
        return real

    def directory(self, path: str | Path | None, *, field: str = "cwd") -> Path:
        """``resolve(path)`` (None: the first root), which must be an existing directory.

        Raises:
            InvalidArgumentsError: it does not exist or is not a directory.
            ToolDeniedError: it is outside the roots.
        """
        real = self.resolve(path, field=field) if path is not None else self.roots[0]
        if not real.is_dir():
            what = "does not exist" if not real.exists() else "is not a directory"
            raise InvalidArgumentsError(
                f"{field} {str(path or real)!r} {what}",
                details={"errors": [{"field": field, "message": what}]},
            )
        return real

    def open(self, real: Path, flags: int, *, make_parents: bool = False, mode: int = 0o644) -> int:
        """Open ``real`` (a path ``resolve`` returned) without following any symlink.

        Each directory from the root down is opened relative to the previous one with
        ``O_NOFOLLOW``, and the file itself too, so a component swapped for a symlink
        after ``resolve`` checked the path (the symlink-swap race) fails instead of
        leading outside the roots.

        Args:
            real: The resolved path, inside a root.
            flags: ``os.open`` flags for the file (``O_NOFOLLOW`` is added).
            make_parents: Create missing directories on the way (mode 0755).
            mode: Permissions of a file created.

        Returns:
            The open file descriptor; the caller closes it.

        Raises:
            ToolDeniedError: a component is now a symlink, or ``real`` is outside.
            OSError: the file cannot be opened (missing, a directory, ...).
        """
        root = next((r for r in self.roots if real == r or real.is_relative_to(r)), None)
        if root is None or real == root:
            raise ToolDeniedError(f"{real} is not a file inside the allowed roots")
        *directories, name = real.relative_to(root).parts
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
        try:
            for part in directories:
                try:
                    inner = _open_directory(part, fd)
                except FileNotFoundError:
                    if not make_parents:
                        raise
                    os.mkdir(part, 0o755, dir_fd=fd)
                    inner = _open_directory(part, fd)
                os.close(fd)
                fd = inner
            try:
                return os.open(name, flags | os.O_NOFOLLOW, mode, dir_fd=fd)
            except OSError as exc:
                if exc.errno == errno.ELOOP:
                    raise _swapped(real) from None
                raise
        finally:
            os.close(fd)

    def relative(self, path: Path) -> str:
        """``path`` as shown to a model: relative to its root when inside the first."""
        first = self.roots[0]
        return str(path.relative_to(first)) if path.is_relative_to(first) else str(path)


def _open_directory(name: str, parent: int) -> int:
    try:
        return os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=parent)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise _swapped(Path(name)) from None
        raise


def _swapped(path: Path) -> ToolDeniedError:
    return ToolDeniedError(
        f"{path} changed into a symlink (or a file) while the call ran; it was not "
        "followed. Try again if that was not an attempt to leave the roots"
    )
