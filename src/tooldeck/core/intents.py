"""Intent dispatch (seed 004): a named intent runs one tool, or a plan of several.

Example::

    router = IntentRouter(registry, [
        Intent("quotes", (IntentStep("get_quotes", params=("symbol",)),), required=("symbol",)),
        Intent("symbol_performance", (
            IntentStep("get_positions", params=("symbol", "account")),
            IntentStep("get_quotes", params=("symbol",)),
        ), required=("symbol",)),
    ])
    outcome = await router.dispatch("symbol_performance", {"symbol": "AAPL"})
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from pydantic import BaseModel, Field

from tooldeck.core.claims import Claim
from tooldeck.core.context import ToolContext
from tooldeck.core.names import closest_names
from tooldeck.core.result import ToolResult
from tooldeck.core.tool import ToolExecutor

__all__ = [
    "CLARIFYING_SCORE",
    "EXAMPLE_CHOICE",
    "ClarifyingQuestion",
    "ComposedAnswer",
    "Figure",
    "Intent",
    "IntentOutcome",
    "IntentPack",
    "IntentPacks",
    "IntentRouter",
    "IntentStep",
    "Route",
]


class ClarifyingQuestion(BaseModel):
    """What to ask the user when a question is unclear (seed 003 interview payload).

    The answer fills ``parameter``: send the question again with
    ``params = {parameter: <chosen option(s) or text>}``.
    """

    question: str
    """The question to show, e.g. "Which account do you mean?"."""
    type: Literal["radio", "checkbox", "text"]
    """``radio``: pick one option; ``checkbox``: pick several; ``text``: free text."""
    options: list[str] = Field(default_factory=list)
    """The choices (parameter values) for ``radio`` and ``checkbox``; empty for ``text``."""
    parameter: str
    """The parameter the answer fills, e.g. ``account``, ``timeframe``, ``symbol``, ``intent``."""


@dataclass(frozen=True, slots=True)
class Route:
    """Where a question goes: an intent with its parameters, or a clarifying question.

    Semantics:
        ``intent`` is None exactly when ``clarification`` is set.
    """

    intent: str | None
    params: Mapping[str, Any] = field(default_factory=dict)
    confidence: float = 1.0
    """0–1: how clearly the question matched the intent."""
    clarification: ClarifyingQuestion | None = None
    also: tuple[Route, ...] = ()
    """The other parts of a question in several parts ("AAPL's price and my cash?"),
    each answered after this one."""


@dataclass(frozen=True, slots=True)
class Figure:
    """A number computed from tool results (e.g. P/L = market value − cost).

    The grounding validator accepts it when every one of ``source_ids`` is cited and,
    when it has a formula (``op``), when ``op(inputs)`` recomputes ``value`` and every
    input is a value of the cited data or of a figure listed before it.
    """

    value: float
    label: str
    source_ids: tuple[str, ...]
    kind: str | None = None
    """``money``, ``percent``, ``quantity`` (``core.kinds``); None matches any kind."""
    subjects: tuple[tuple[str, str], ...] = ()
    """Whose figure it is: (type, id) pairs, e.g. (("account", "joint"), ("symbol", "AAPL"))."""
    op: Literal["sum", "product", "difference", "percent_of"] | None = None
    """How ``value`` derives from ``inputs``: their sum, product, first minus the rest,
    or first as a percentage of second. None: the pack's own statement, not recomputed."""
    inputs: tuple[float, ...] = ()
    total: bool = False
    """A total over several subjects (what "total" in an answer must match)."""
    change: bool = False
    """A change or a return (it has a direction), not a level."""
    terms: tuple[str, ...] = ()
    """Words that name the figure in an answer ("worth" for a market value), besides
    the last word of ``label`` (``market_value`` → "market value")."""
    excluding: tuple[tuple[str, str], ...] = ()
    """The subjects a total leaves out ("all accounts but joint"): it backs a sentence
    only when that sentence says it leaves something out ("excluding the joint account")."""


@dataclass(frozen=True, slots=True)
class ComposedAnswer:
    """An answer written from tool results: Markdown, the source_ids it cites, its figures."""

    markdown: str
    citations: tuple[str, ...]
    figures: tuple[Figure, ...] = ()
    claims: tuple[Claim, ...] = ()
    """Its figures bound to the fields they state (``core.claims``): the validator checks
    each at its pointer."""
    bound: bool = False
    """Every figure of ``markdown`` is among ``claims`` (the writer binds as it writes), so
    a number outside them is a finding (``unbound_figure``)."""


ArgumentBuilder = Callable[[Mapping[str, Any], Sequence[ToolResult]], dict[str, Any]]
"""Builds a step's arguments from the intent's parameters and the earlier steps' results."""


@dataclass(frozen=True, slots=True)
class IntentStep:
    """One tool call of an intent's plan.

    Semantics:
        The arguments are the intent parameters named in ``params`` that are present
        and not None, merged with ``fixed``; when ``build`` is given, it computes them
        from the parameters and the earlier results instead.
    """

    tool: str
    """Tool to call."""
    params: tuple[str, ...] = ()
    """Intent parameters passed through as arguments of the same name."""
    fixed: Mapping[str, Any] | None = None
    """Constant arguments."""
    build: ArgumentBuilder | None = None
    """Computes the arguments from parameters and earlier results."""

    def arguments(self, params: Mapping[str, Any], earlier: Sequence[ToolResult]) -> dict[str, Any]:
        """The arguments of this step."""
        if self.build is not None:
            return self.build(params, earlier)
        args = {k: params[k] for k in self.params if params.get(k) is not None}
        return {**args, **(self.fixed or {})}


@dataclass(frozen=True, slots=True)
class Intent:
    """A named plan of tool calls, with the parameters it requires."""

    name: str
    """Intent name, e.g. ``positions``."""
    steps: tuple[IntentStep, ...]
    """Tool calls, run in order; a later step may use earlier results."""
    required: tuple[str, ...] = ()
    """Parameters that must be present."""
    description: str = ""
    """What the intent answers."""


@dataclass(frozen=True, slots=True)
class IntentOutcome:
    """What a dispatch produced: the intent, its parameters and one result per step run."""

    intent: str
    params: Mapping[str, Any]
    results: tuple[ToolResult, ...]

    @property
    def success(self) -> bool:
        """True when every step succeeded."""
        return all(r.success for r in self.results)

    @property
    def source_ids(self) -> list[str]:
        """Provenance ids of the successful results, in order, without repeats."""
        return list(dict.fromkeys(r.source_id for r in self.results if r.success and r.source_id))


class IntentRouter:
    """Dispatches intents to tools through any ``ToolExecutor`` (seed 004 ``call_tool``).

    Semantics:
        ``dispatch`` never raises for tool-level problems: an unknown intent gives a
        ``not_found`` result listing the intents, a missing required parameter a
        ``validation`` result; steps run in order and the plan stops at the first
        failed step (later steps may depend on it).
    """

    def __init__(self, executor: ToolExecutor, intents: Sequence[Intent]) -> None:
        self.executor = executor
        self._intents = {i.name: i for i in intents}

    @property
    def intents(self) -> list[Intent]:
        """The intents this router knows, in registration order."""
        return list(self._intents.values())

    async def dispatch(
        self, intent: str, params: Mapping[str, Any], ctx: ToolContext | None = None
    ) -> IntentOutcome:
        """Run the plan of ``intent`` with ``params``."""
        plan = self._intents.get(intent)
        if plan is None:
            names = list(self._intents)
            near = closest_names(intent, names)
            hint = f" Did you mean {near[0]!r}?" if near else ""
            failure = ToolResult.fail(
                "not_found",
                f"Unknown intent {intent!r}.{hint} Intents: {', '.join(names)}.",
                details={"intents": names, "closest": near},
            )
            return IntentOutcome(intent, params, (failure,))
        missing = [p for p in plan.required if params.get(p) in (None, "")]
        if missing:
            failure = ToolResult.fail(
                "validation",
                f"Intent {intent!r} needs {', '.join(missing)}.",
                details={"missing": missing},
            )
            return IntentOutcome(intent, params, (failure,))
        results: list[ToolResult] = []
        for step in plan.steps:
            result = await self.executor.execute(step.tool, step.arguments(params, results), ctx)
            results.append(result)
            if not result.success:
                break
        return IntentOutcome(intent, params, tuple(results))


class IntentPack(Protocol):
    """Answers questions of one domain without a model (seed 004's router + context builder).

    The agent's deterministic mode runs ``route`` → the intent's plan (``intents``,
    through an ``IntentRouter``) → ``compose``; the grounding validator accepts the
    numbers of ``figures(results)`` besides those in the results' data.
    """

    intents: Sequence[Intent]
    """The intents and their tool plans."""

    def route(self, question: str, given: Mapping[str, Any] | None = None) -> Route:
        """The intent and parameters of ``question``, or a clarifying question.

        Parameters in ``given`` win over those read from the question.
        """
        ...

    def compose(self, route: Route, outcome: IntentOutcome) -> ComposedAnswer:
        """The answer, written from a successful ``outcome``."""
        ...

    def figures(self, results: Sequence[ToolResult]) -> list[Figure]:
        """Numbers derived from ``results``, each with the source_ids it derives from."""
        ...

    def subjects(self) -> Mapping[str, tuple[str, str]]:
        """Display names of the domain's subjects: ``{"Roth IRA": ("account", "roth_ira")}``.

        The grounding validator reads them to know whose figure a sentence states.
        """
        ...


CLARIFYING_SCORE = 0.5
"""How strongly a pack's clarifying question claims a question, against other packs'
routes: above a pack's fallback (a document search, a polite "out of scope"), below a
clear match."""


class IntentPacks:
    """Several packs' intents as one ``IntentPack``.

    Each question goes to the pack whose route claims it most.

    Semantics:
        ``route`` asks every pack; an intent route scores its confidence, a clarifying
        question ``CLARIFYING_SCORE``; the highest wins, the earlier pack on a tie. A
        ``given`` that names an intent (``{"intent": ...}``, the answer to "which do you
        mean?") goes to the pack with that intent. ``compose`` is the routed intent's
        pack's; ``figures`` and ``subjects`` are every pack's together.

        ``examples`` are packs answering from example data nobody asked for (the
        brokerage demo portfolio on by default). Example figures never answer for the
        user (issue 54): while another pack holds data of the user's own (its optional
        ``holds_own_data()`` is true, e.g. documents in the knowledge store), an example
        pack's clarifying question loses to the other packs, and an answer that reads
        its data is not given unasked: the route asks instead whether to search the
        user's data or to answer from the example (``EXAMPLE_CHOICE``), unless ``given``
        names its intent. Its "out of scope" (an intent that calls no tool) still answers.

    Raises:
        ValueError: two packs declare an intent of the same name.
    """

    def __init__(self, packs: Sequence[IntentPack], examples: Sequence[IntentPack] = ()) -> None:
        self.packs = list(packs)
        self.examples = list(examples)
        self._owner: dict[str, IntentPack] = {}
        for pack in self.packs:
            for intent in pack.intents:
                if intent.name in self._owner:
                    raise ValueError(f"two packs declare the intent {intent.name!r}")
                self._owner[intent.name] = pack
        self.intents: Sequence[Intent] = [i for pack in self.packs for i in pack.intents]

    def route(self, question: str, given: Mapping[str, Any] | None = None) -> Route:
        """The best of the packs' routes (see the class docstring)."""
        scored: list[tuple[float, Route, IntentPack]] = []
        for pack in self.packs:
            route = pack.route(question, given)
            score = CLARIFYING_SCORE if route.intent is None else route.confidence
            if given and route.intent is not None and given.get("intent") == route.intent:
                score = 2.0  # the answer to this pack's own question
            scored.append((score, route, pack))
        assert scored, "IntentPacks needs at least one pack"
        best_score, best, owner = max(scored, key=lambda s: s[0])  # the first on a tie
        examples = self.examples
        if best_score >= 2.0 or owner not in examples or self._reads_nothing(best):
            return best
        if not any(_holds_own_data(p) for p in self.packs if p not in examples):
            return best
        mine = max(((s, r) for s, r, p in scored if p not in examples), key=lambda s: s[0])[1]
        if best.intent is None or mine.intent is None:
            return mine
        return Route(None, clarification=ClarifyingQuestion(
            question=EXAMPLE_CHOICE, type="radio",
            options=[mine.intent, best.intent], parameter="intent",
        ))  # fmt: skip

    def _reads_nothing(self, route: Route) -> bool:
        """True for an intent that calls no tool (a polite "out of scope")."""
        return route.intent is not None and not any(
            i.steps for i in self._owner[route.intent].intents if i.name == route.intent
        )

    def compose(self, route: Route, outcome: IntentOutcome) -> ComposedAnswer:
        """The answer, written by the pack whose intent ``route`` names."""
        assert route.intent is not None
        return self._owner[route.intent].compose(route, outcome)

    def figures(self, results: Sequence[ToolResult]) -> list[Figure]:
        """Every pack's figures of ``results``."""
        return [f for pack in self.packs for f in pack.figures(results)]

    def subjects(self) -> Mapping[str, tuple[str, str]]:
        """Every pack's subjects (an earlier pack's name wins)."""
        merged: dict[str, tuple[str, str]] = {}
        for pack in reversed(self.packs):
            merged.update(pack.subjects())
        return merged


EXAMPLE_CHOICE = (
    "Only example data here would answer that (a demo shipped with tooldeck, not your "
    "data). Search your own data instead, or answer from the example?"
)
"""The question ``IntentPacks`` asks when only an example pack would answer for the user."""


def _holds_own_data(pack: IntentPack) -> bool:
    """``pack.holds_own_data()``, False when the pack has no such method or it fails."""
    holds = getattr(pack, "holds_own_data", None)
    if holds is None:
        return False
    try:
        return bool(holds())
    except Exception:  # an unreachable store holds nothing it can answer from
        return False
