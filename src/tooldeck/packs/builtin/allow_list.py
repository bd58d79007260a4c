r"""The ``shell`` tool's command allow-list, checked on the command as bash will parse it.

Example::

    allow = CommandAllowList(["echo", "ls"], roots=Roots([Path.cwd()]), path=os.environ["PATH"])
    allow.check("ls -la | echo done 2>&1 > out.txt", cwd=Path.cwd())   # passes
    allow.check("echo hi\nid", cwd=Path.cwd())      # ToolDeniedError: id is not allowed

The line is parsed by ``bashlex`` (a port of bash's own grammar), so newlines,
comments, ``;``, ``&&``, pipes, subshells, loops and command or process substitution
are seen as bash sees them, and every command in the line is checked, nested ones
included. A command passes when:

- its name is literal (no ``$VAR``, substitution or glob in it);
- a name without ``/`` is in the list (bash runs its builtin, or the program ``PATH``
  finds, and ``PATH`` cannot be changed by the caller); a name with ``/`` resolves to
  the same file as a listed program (``/tmp/evil/echo`` is not ``echo``);
- no assignment on the line sets a variable that changes what runs (``PATH``,
  ``BASH_ENV``, ``ENV``, ``IFS``, ``LD_*``, ``BASH_FUNC_*`` ...); functions cannot be
  defined (one named ``echo`` would replace the builtin);
- every file it writes through a redirection (``>``, ``>>``, ``&>``, ``<>``) is a
  literal path inside the roots (or ``/dev/null``); ``2>&1`` and other descriptor
  copies are fine.

Parameter expansions are read too, since bash runs code hidden in them: only a name
(``$x``, ``${x}``, ``$1``, ``$?``), its length (``${#x}``) and a default, alternative
or pattern with literal text (``${x:-none}``, ``${x%.txt}``) pass; subscripts,
indirection (``${!x}``), substrings (arithmetic) and replacements are refused, as is
any ``$`` or backtick in them. A here-document whose delimiter is unquoted has its body
expanded, so a ``$`` or backtick in the body is refused (quote nothing you need
literally: write it in a file instead). Arithmetic expansion with numbers only
(``$((1+1))``) is allowed; a line ``bashlex`` cannot parse is refused. A listed program
that runs other programs (``env``, ``xargs``, ``find -exec``, ``sh``) lets anything
through: list only what you would let run with any arguments.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import bashlex

from tooldeck.exceptions import ToolDeniedError
from tooldeck.packs.builtin.roots import Roots

__all__ = ["CommandAllowList", "unsafe_env_name"]

_UNSAFE_ENV = frozenset(
    {
        "PATH", "ENV", "BASH_ENV", "IFS", "SHELLOPTS", "BASHOPTS", "PS4", "PROMPT_COMMAND",
        "GLOBIGNORE", "CDPATH", "BASH_XTRACEFD", "EXECIGNORE", "PYTHONSTARTUP", "PERL5OPT",
    }
)  # fmt: skip
_UNSAFE_PREFIXES = ("LD_", "BASH_FUNC_", "DYLD_")
_WRITES = frozenset({">", ">>", ">|", "&>", "&>>", "<>"})
_HARMLESS_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr"})
_ARITHMETIC = re.compile(r"\$\(\(([0-9\s+\-*/%()<>=!&|^~?:,]*)\)\)")
_GLOB = re.compile(r"[*?\[]")
_PARAMETER = re.compile(
    r"(?:[0-9@*#?$!-]|#?[A-Za-z_][A-Za-z0-9_]*"  # $1 $? ${#x} ${x}
    r"|[A-Za-z_][A-Za-z0-9_]*(?::?[-+?]|##?|%%?)[^$`\[\]()]*)?"  # ${x:-text} ${x%.txt}
)
"""A parameter expansion's text (inside ``${}``) that runs no code (module docstring)."""


def unsafe_env_name(name: str) -> bool:
    """Whether setting ``name`` can change which program runs or inject code.

    Covers bash's start-up and parsing variables (``BASH_ENV``, ``ENV``, ``IFS``,
    ``SHELLOPTS``, ``PS4``...), exported functions (``BASH_FUNC_*``), the loader
    (``LD_*``, ``DYLD_*``) and ``PATH``.
    """
    return name in _UNSAFE_ENV or name.startswith(_UNSAFE_PREFIXES)


class CommandAllowList:
    """Decides whether a bash command line runs only allowed programs (module docstring).

    Args:
        allowed: Program names (``git``, bash builtins such as ``echo``) or paths.
        roots: Where redirections may write.
        path: The ``PATH`` the command runs with (resolves the listed names).
    """

    def __init__(self, allowed: Iterable[str], *, roots: Roots, path: str | None) -> None:
        self.allowed = sorted(set(allowed))
        self.names = frozenset(a for a in self.allowed if "/" not in a)
        self.roots = roots
        self.path = path
        self.files = frozenset(filter(None, (self._resolve(a, Path("/")) for a in self.allowed)))

    def _resolve(self, name: str, cwd: Path) -> str | None:
        found = str(cwd / name) if "/" in name else shutil.which(name, path=self.path)
        return os.path.realpath(found) if found and os.path.exists(found) else None

    def check(self, command: str, *, cwd: Path) -> None:
        """Pass silently, or raise naming the first offence.

        Raises:
            ToolDeniedError: a command, assignment, function or redirection is not
                allowed, or the line cannot be parsed (details: ``allowed``).
        """
        line = _ARITHMETIC.sub("0", command)  # bashlex has no arithmetic; numbers only
        try:
            trees = bashlex.parse(line)
        except (bashlex.errors.ParsingError, NotImplementedError) as exc:
            self._deny(f"cannot check the command line ({exc}); write plain commands")
        for tree in trees:
            _Visitor(self, cwd).visit(tree)

    def check_command(self, word: Any, cwd: Path) -> None:
        """Check one command's name (a ``bashlex`` word node)."""
        name = word.word
        if word.parts or _GLOB.search(name):
            self._deny(f"command name {name!r} must be written literally (no expansion)")
        if "/" not in name:
            if name not in self.names:
                self._deny(f"{name} is not an allowed command")
            return
        resolved = self._resolve(name, cwd)
        if resolved is None or resolved not in self.files:
            self._deny(f"{name} is not an allowed program (it is not the listed one)")

    def check_target(self, word: Any, cwd: Path) -> None:
        """Check a file a redirection writes."""
        target = word.word
        if word.parts or _GLOB.search(target):
            self._deny(f"redirection target {target!r} must be written literally")
        if target in _HARMLESS_TARGETS:
            return
        resolved = Path(os.path.realpath(cwd / target))
        if not any(resolved.is_relative_to(root) for root in self.roots.roots):
            self._deny(f"redirection writes {target} outside the allowed roots")

    def _deny(self, message: str) -> Any:
        raise ToolDeniedError(
            f"shell: {message}; allowed: {', '.join(self.allowed) or 'none'}",
            details={"allowed": self.allowed},
        )


class _Visitor(bashlex.ast.nodevisitor):  # type: ignore[misc]
    """Walks a ``bashlex`` tree, checking every node that can run or write something."""

    def __init__(self, allow: CommandAllowList, cwd: Path) -> None:
        self.allow = allow
        self.cwd = cwd

    def visitcommand(self, node: Any, parts: list[Any]) -> None:
        words = [p for p in parts if p.kind == "word"]
        if words:  # a bare assignment or redirection runs no program
            self.allow.check_command(words[0], self.cwd)

    def visitassignment(self, node: Any, parts: list[Any]) -> None:
        name = node.word.split("=", 1)[0].split("[", 1)[0].rstrip("+")
        if unsafe_env_name(name):
            self.allow._deny(f"setting {name} is not allowed")

    def visitfunction(self, node: Any, name: Any, body: Any, parts: list[Any]) -> None:
        self.allow._deny(f"defining a function ({name.word}) is not allowed")

    def visitparameter(self, node: Any, value: Any) -> None:
        text = getattr(node, "value", None) or ""
        if not _PARAMETER.fullmatch(text):
            self.allow._deny(
                f"parameter expansion ${{{text}}} is not allowed (only $name, ${{name}}, "
                "${#name} and ${name:-literal text})"
            )

    def visitredirect(self, node: Any, input: Any, type: str, output: Any, heredoc: Any) -> None:
        if type in _WRITES and not isinstance(output, int):
            self.allow.check_target(output, self.cwd)
        body = getattr(heredoc, "value", None) or ""
        if "$" in body or "`" in body:
            self.allow._deny(
                "a here-document body with $ or ` is expanded by bash and may run "
                "commands; write that text to a file instead"
            )
