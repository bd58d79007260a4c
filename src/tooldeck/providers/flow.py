"""Data-flow labels: a run that read private data asks before it sends data out.

A model that follows instructions injected into a web page or a document can read the
user's private data and then send it anywhere a tool reaches (Simon Willison's
"lethal trifecta"). Every tool's results carry labels (``private``, ``untrusted``,
``public``) and every tool states what it does with its arguments (``egress``,
``destructive``); the confirming provider keeps, for each run, which labels its calls
have read, and asks a human before:

- an ``egress`` call in a run that has read ``private`` data (the approver sees which
  private sources were read and the outbound arguments);
- a ``destructive`` call in a run that has read ``untrusted`` content.

A run is a chat run (``ToolContext.run_id``), a client session (``session_id``), an
MCP connection (channel ``mcp:<id>``) or, for MCP clients without a lasting session
(2026-07-28), the principal's calls over MCP within a window; each principal's runs are
kept apart. Calls outside any run (a REST call without ``X-Session-ID``, a CLI call) are
not tracked. Labels
come from the tool (``ToolDefinition.labels``/``effects``), else from its annotations
(``open_world``: results ``untrusted``, effect ``egress``; ``destructive``: effect
``destructive``; a tool of an MCP server: results ``untrusted``), plus the ``[flow]``
table, which can add labels to any tool and mark tools ``public``. A label is not a
proof: data can leave through covert channels (timing, a tool's side effects), and
a tool that lies about its labels is trusted (docs/security.md).
"""

from __future__ import annotations

import time
from collections import OrderedDict

from pydantic import BaseModel, ConfigDict, Field

from tooldeck.core.context import ANONYMOUS, ToolContext
from tooldeck.core.definition import ToolDefinition
from tooldeck.providers.filtered import compile_globs

__all__ = ["FlowConfig", "FlowRules", "FlowTracker", "Run"]


class FlowConfig(BaseModel):
    """The ``[flow]`` table: data-flow labels on top of the tools' own.

    Every list holds tool names or globs (``crm.*``); a name that matches no tool is a
    configuration error, so a typo cannot switch a rule off.
    """

    model_config = ConfigDict(extra="forbid")

    enabled: bool = True
    """Ask before a run that read private data sends data out (and so on). Off only
    where every tool and every model is trusted."""
    private: list[str] = Field(default_factory=list)
    """Tools whose results are the user's private data."""
    untrusted: list[str] = Field(default_factory=list)
    """Tools whose results others wrote (pages, documents, messages)."""
    public: list[str] = Field(default_factory=list)
    """Tools whose results are neither: they lose the labels above (market quotes)."""
    egress: list[str] = Field(default_factory=list)
    """Tools that send their arguments outside."""
    destructive: list[str] = Field(default_factory=list)
    """Tools that change things."""

    def names(self) -> list[str]:
        """Every name or glob the table lists (checked against the tools at start)."""
        return [*self.private, *self.untrusted, *self.public, *self.egress, *self.destructive]


class FlowRules:
    """Resolves a tool's labels and effects (module docstring).

    Args:
        config: The ``[flow]`` table; None: the tools' own labels only.
    """

    def __init__(self, config: FlowConfig | None = None) -> None:
        self.config = config or FlowConfig()
        self._patterns = {
            key: compile_globs(getattr(self.config, key))
            for key in ("private", "untrusted", "public", "egress", "destructive")
        }

    def _listed(self, key: str, name: str) -> bool:
        return self._patterns[key].fullmatch(name) is not None

    def labels(self, definition: ToolDefinition) -> frozenset[str]:
        """What ``definition``'s results are: ``private``, ``untrusted`` (or neither)."""
        name = definition.name
        if self._listed("public", name):
            return frozenset()
        if definition.labels is not None:
            own = set(definition.labels)
        else:
            own = set()
            if definition.annotations.open_world or definition.server_id is not None:
                own.add("untrusted")
        own |= {key for key in ("private", "untrusted") if self._listed(key, name)}
        return frozenset(own - {"public"})

    def effects(self, definition: ToolDefinition) -> frozenset[str]:
        """What ``definition`` does with its arguments: ``egress``, ``destructive``."""
        name = definition.name
        if definition.effects is not None:
            own = set(definition.effects)
        else:
            annotations = definition.annotations
            own = {"egress"} if annotations.open_world else set()
            if annotations.destructive:
                own.add("destructive")
        own |= {key for key in ("egress", "destructive") if self._listed(key, name)}
        return frozenset(own)


Run = tuple[str, str]
"""Whose run and which: ``(principal, "run:<id>" | "session:<id>" | "mcp:<id>" | "mcp")``."""


class FlowTracker:
    """Which labels each run has read, and from which tools, kept apart per principal.

    Semantics:
        ``record`` is called before a tracked call runs (conservative: a failed read
        counts too). Each principal has its own ``max_runs`` runs, the least recently
        used forgotten first, so one user's traffic never evicts another's; at most
        ``max_principals`` principals are remembered. A client without a lasting
        session (an MCP 2026-07-28 client: channel ``mcp``) is one run per principal
        that lasts while it is used, forgotten ``window_s`` after its last call.
        ``inherit`` starts a run with another's labels (a delegated run, its parent's).
    """

    def __init__(
        self, max_runs: int = 10_000, *, max_principals: int = 100_000, window_s: float = 1800.0
    ) -> None:
        self.max_runs = max_runs
        self.max_principals = max_principals
        self.window_s = window_s
        self._principals: OrderedDict[str, OrderedDict[str, dict[str, list[str]]]] = OrderedDict()
        self._touched: dict[Run, float] = {}  # sessionless runs: when last used

    @staticmethod
    def run_of(ctx: ToolContext | None) -> Run | None:
        """The run a call belongs to, or None (a lone call is not tracked)."""
        if ctx is None:
            return None
        principal = ctx.user or ANONYMOUS
        if ctx.run_id:
            return principal, f"run:{ctx.run_id}"
        if ctx.session_id:
            return principal, f"session:{ctx.session_id}"
        channel = ctx.channel
        if channel is not None and (channel == "mcp" or channel.startswith("mcp:")):
            return principal, channel
        return None

    def _runs(self, principal: str) -> OrderedDict[str, dict[str, list[str]]]:
        runs = self._principals.get(principal)
        if runs is None:
            runs = self._principals[principal] = OrderedDict()
            if len(self._principals) > self.max_principals:
                gone, _ = self._principals.popitem(last=False)
                self._touched.pop((gone, "mcp"), None)
        else:
            self._principals.move_to_end(principal)
        return runs

    def _seen(self, run: Run, create: bool) -> dict[str, list[str]] | None:
        principal, key = run
        if key == "mcp":  # no lasting session: a window since the last call
            touched = self._touched.get(run)
            now = time.monotonic()
            if touched is not None and now - touched > self.window_s:
                self._principals.get(principal, OrderedDict()).pop(key, None)
            if create:
                self._touched[run] = now
        runs = self._runs(principal) if create else self._principals.get(principal)
        if runs is None:
            return None
        seen = runs.get(key)
        if seen is None and create:
            seen = runs[key] = {}
            if len(runs) > self.max_runs:
                runs.popitem(last=False)
        elif seen is not None:
            runs.move_to_end(key)
        return seen

    def record(self, run: Run, labels: frozenset[str], tool: str) -> None:
        """Note that ``run`` read ``labels`` through ``tool``."""
        seen = self._seen(run, create=True)
        assert seen is not None
        for label in labels:
            tools = seen.setdefault(label, [])
            if tool not in tools:
                tools.append(tool)

    def inherit(self, parent: Run | None, child: Run) -> None:
        """Start ``child`` with what ``parent`` has read (a delegated run)."""
        for label, tools in self.read(parent).items():
            for tool in tools:
                self.record(child, frozenset({label}), tool)

    def read(self, run: Run | None) -> dict[str, list[str]]:
        """Label → tools that ``run`` read it through (empty for an unknown run)."""
        if run is None:
            return {}
        return dict(self._seen(run, create=False) or {})

    def reason(self, run: Run | None, effects: frozenset[str], tool: str) -> str | None:
        """Why a call of ``tool`` with ``effects`` in ``run`` needs a human, or None."""
        seen = self.read(run)
        if "egress" in effects and seen.get("private"):
            return (
                f"This run has read private data (from {', '.join(seen['private'])}) and "
                f"{tool} sends its arguments outside: check they carry nothing private."
            )
        if "destructive" in effects and seen.get("untrusted"):
            return (
                f"This run has read content others wrote (from {', '.join(seen['untrusted'])}) "
                f"and {tool} changes things: check the call is what the user asked for, not "
                "an instruction planted in that content."
            )
        return None
