"""One tool, several actions: ``CompositeTool`` + ``ActionStrategy`` (seed 000 decision 2).

Example::

    class Fetch(ActionStrategy):
        name = "fetch"
        description = "Download a page."
        RequestModel = FetchArgs           # url, max_chars

        async def run(self, request: FetchArgs, ctx: ToolContext) -> dict: ...

    class WebTool(CompositeTool):
        name = "web"
        description = "Search the web or fetch a page."
        actions = (Search(), Fetch())

    await WebTool().execute({"action": "fetch", "url": "https://example.org"})
"""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError, create_model

from tooldeck.core.context import ToolContext
from tooldeck.core.names import closest_names
from tooldeck.core.pools import in_thread
from tooldeck.core.schema import model_schema
from tooldeck.core.tool import Arguments, BaseTool
from tooldeck.core.validation import from_pydantic, invalid_arguments, parse_arguments
from tooldeck.exceptions import InvalidArgumentsError, RegistrationError

__all__ = ["ActionStrategy", "CompositeTool"]


class ActionStrategy(ABC):
    """One action of a ``CompositeTool``: a name, a request model and ``run``.

    ``run`` may be sync or async; a sync ``run`` goes to a worker thread unless the
    strategy sets ``blocking = False``. ``requires_confirmation`` puts the action in
    the tool's ``confirm_actions``: a human approves calls of this action only.
    """

    name: str = ""
    description: str = ""
    RequestModel: type[BaseModel] = BaseModel
    ResponseModel: type[BaseModel] | None = None
    """The action's result, when it is typed (gives the tool's output schema)."""
    blocking: bool = True
    requires_confirmation: bool = False

    @abstractmethod
    def run(self, request: Any, ctx: ToolContext) -> Any:
        """Do the action on its validated request."""


class CompositeTool(BaseTool[tuple[ActionStrategy, BaseModel], Any]):
    """A tool whose ``action`` argument selects an ``ActionStrategy``.

    Semantics:
        The input schema is a union of one object per action, each with ``action``
        fixed to that action's name and the action's own parameters (a discriminated
        union on ``action``); model exporters flatten it into one object
        (``core.schema.flatten_root_union``), MCP keeps it exact. A call is validated
        against the chosen action's model only; an unknown or missing action is a
        ``validation`` error listing the actions.

    Raises:
        RegistrationError: no actions, or two actions with one name.
    """

    actions: Sequence[ActionStrategy] = ()

    def __init__(self, actions: Sequence[ActionStrategy] | None = None) -> None:
        if actions is not None:
            self.actions = tuple(actions)
        if not self.actions:
            raise RegistrationError(f"composite tool {self.name!r} has no actions")
        self._strategies: dict[str, tuple[ActionStrategy, type[BaseModel]]] = {}
        for strategy in self.actions:
            if strategy.name in self._strategies:
                raise RegistrationError(
                    f"composite tool {self.name!r} has two actions named {strategy.name!r}"
                )
            model = create_model(
                f"{type(self).__name__}_{strategy.name}",
                __base__=strategy.RequestModel,
                action=(Literal[strategy.name], Field(description=strategy.description)),  # type: ignore[arg-type]
            )
            self._strategies[strategy.name] = (strategy, model)
        if not self.confirm_actions:
            self.confirm_actions = tuple(s.name for s in self.actions if s.requires_confirmation)

    def build_input_schema(self) -> dict[str, Any]:
        """``{"type": "object", "oneOf": [one object schema per action]}``."""
        if self.input_schema is not None:
            return dict(self.input_schema)
        variants = []
        for strategy, model in self._strategies.values():
            variant = model_schema(model)
            props = variant.get("properties", {})
            variant["properties"] = {"action": props.pop("action"), **props}
            variant["required"] = [
                "action",
                *(r for r in variant.get("required", ()) if r != "action"),
            ]
            if strategy.description:
                variant["description"] = strategy.description
            variants.append(variant)
        return {"type": "object", "oneOf": variants}

    def build_output_schema(self) -> dict[str, Any] | None:
        """An object; with every action's ``ResponseModel`` known, one of their schemas.

        Every action answers a JSON object, which is what MCP's ``outputSchema`` (and a
        client that validates ``structuredContent``) needs to know.
        """
        if self.output_schema is not None:
            return dict(self.output_schema)
        models = [s.ResponseModel for s in self.actions]
        if all(models):
            return {"type": "object", "anyOf": [model_schema(m) for m in models if m]}
        return {"type": "object", "description": "The chosen action's result."}

    def validate_input(self, arguments: Arguments) -> tuple[ActionStrategy, BaseModel]:
        """Pick the action's strategy and validate the arguments with its model.

        The arguments are prepared first (``core.arguments``).

        Raises:
            InvalidArgumentsError: a missing or unknown action (listing the actions), an
                undeclared argument, or arguments that do not fit the action's model; the
                text lists the chosen action's arguments.
        """
        try:
            parsed = parse_arguments(arguments)
        except InvalidArgumentsError as exc:
            raise InvalidArgumentsError(
                f"Invalid arguments for {self.name}: {exc.message}."
            ) from None
        action = parsed.get("action")
        entry = self._strategies.get(action) if isinstance(action, str) else None
        if entry is None:
            names = list(self._strategies)
            hint = closest_names(str(action), names) if isinstance(action, str) else []
            said = "missing" if action is None else f"unknown ({action!r})"
            raise InvalidArgumentsError(
                f"Invalid arguments for {self.name}: action: {said}. "
                f"Actions: {', '.join(names)}." + (f" Did you mean {hint[0]!r}?" if hint else ""),
                details={
                    "errors": [{"field": "action", "message": f"action {said}", "type": "enum"}],
                    "actions": names,
                },
            )
        strategy, model = entry
        variant = self._variant_schemas[strategy.name]
        prepared, errors = self.argument_shape.prepare(self.name, parsed)
        try:
            params = model.model_validate(prepared)
        except ValidationError as exc:
            errors += from_pydantic(exc)
        if errors:
            raise invalid_arguments(self.name, errors, variant)
        return strategy, params

    @property
    def _variant_schemas(self) -> dict[str, dict[str, Any]]:
        cached: dict[str, dict[str, Any]] | None = self.__dict__.get("_variants")
        if cached is None:
            variants = self.definition.input_schema.get("oneOf") or []
            cached = {
                str(v.get("properties", {}).get("action", {}).get("const")): v for v in variants
            }
            cached = {name: cached.get(name, {}) for name in self._strategies}
            self.__dict__["_variants"] = cached
        return cached

    async def execute_internal(
        self, request: tuple[ActionStrategy, BaseModel], ctx: ToolContext
    ) -> Any:
        """Run the chosen strategy (in the tool's thread pool when it is sync and blocking)."""
        strategy, params = request
        if inspect.iscoroutinefunction(strategy.run):
            return await strategy.run(params, ctx)
        if strategy.blocking:
            return await in_thread(self.pool or self.name, strategy.run, params, ctx)
        return strategy.run(params, ctx)
