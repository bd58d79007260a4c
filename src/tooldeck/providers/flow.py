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

A run is a chat run (``ToolContext.run_id``), a client session (``session_id``) or an
MCP connection (channel ``mcp:<id>``); calls outside any run are not tracked. Labels
come from the tool (``ToolDefinition.labels``/``effects``), else from its annotations
(``open_world``: results ``untrusted``, effect ``egress``; ``destructive``: effect
``destructive``; a tool of an MCP server: results ``untrusted``), plus the ``[flow]``
table, which can add labels to any tool and mark tools ``public``. A label is not a
proof: data can leave through covert channels (timing, a tool's side effects), and
a tool that lies about its labels is trusted (docs/security.md).
"""

from __future__ import annotations

from collections import OrderedDict

from pydantic import BaseModel, ConfigDict, Field

from tooldeck.core.context import ToolContext
from tooldeck.core.definition import ToolDefinition
from tooldeck.providers.filtered import compile_globs

__all__ = ["FlowConfig", "FlowRules", "FlowTracker"]


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


class FlowTracker:
    """Which labels each run has read, and from which tools.

    Semantics:
        ``record`` is called before a tracked call runs (conservative: a failed read
        counts too). At most ``max_runs`` runs are remembered, the least recently used
        forgotten first.
    """

    def __init__(self, max_runs: int = 10_000) -> None:
        self.max_runs = max_runs
        self._runs: OrderedDict[str, dict[str, list[str]]] = OrderedDict()

    @staticmethod
    def run_of(ctx: ToolContext | None) -> str | None:
        """The run a call belongs to, or None (a lone call is not tracked)."""
        if ctx is None:
            return None
        if ctx.run_id:
            return f"run:{ctx.run_id}"
        if ctx.session_id:
            return f"session:{ctx.user or ''}:{ctx.session_id}"
        channel = ctx.channel
        return channel if channel is not None and channel.startswith("mcp:") else None

    def record(self, run: str, labels: frozenset[str], tool: str) -> None:
        """Note that ``run`` read ``labels`` through ``tool``."""
        seen = self._runs.get(run)
        if seen is None:
            seen = self._runs[run] = {}
            if len(self._runs) > self.max_runs:
                self._runs.popitem(last=False)
        else:
            self._runs.move_to_end(run)
        for label in labels:
            tools = seen.setdefault(label, [])
            if tool not in tools:
                tools.append(tool)

    def read(self, run: str | None) -> dict[str, list[str]]:
        """Label → tools that ``run`` read it through (empty for an unknown run)."""
        return dict(self._runs.get(run, {})) if run is not None else {}

    def reason(self, run: str | None, effects: frozenset[str], tool: str) -> str | None:
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
