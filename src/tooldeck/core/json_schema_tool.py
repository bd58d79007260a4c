"""Tools described by a raw JSON Schema and a callable (hand-written, MCP or OpenAPI tools)."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from time import perf_counter
from typing import Any

from tooldeck.core.arguments import check_arguments
from tooldeck.core.context import EMPTY_CONTEXT, ToolContext
from tooldeck.core.definition import ToolAnnotations
from tooldeck.core.patterns import has_patterns
from tooldeck.core.result import ToolResult
from tooldeck.core.tool import Arguments, BaseTool, error_result
from tooldeck.core.validation import compile_schema
from tooldeck.exceptions import InvalidArgumentsError, RegistrationError

__all__ = ["JsonSchemaTool"]


class _Checked(dict[str, Any]):
    """Arguments already prepared and validated (in a worker thread)."""


class JsonSchemaTool(BaseTool[dict[str, Any], Any]):
    """A tool whose arguments are described by a JSON Schema rather than a Pydantic model.

    Semantics:
        Arguments are validated with ``jsonschema`` against ``input_schema`` (its
        ``$schema`` draft, else 2020-12) before ``function`` is called with them as
        keyword arguments, or as one dict when ``pass_dict=True``. Errors read like those
        of Pydantic-model tools: each field, what was expected, the arguments that exist.
        ``function`` may be sync or async; a parameter named ``ctx`` receives the context.
        A schema with ``pattern`` keywords (from an OpenAPI document, say) is checked in a
        worker thread, its matches time-bounded (``core.patterns``): a pattern that
        backtracks never stops the event loop.

    Args:
        name: Tool name.
        description: What the tool does, for the model.
        input_schema: JSON Schema of the arguments; must have ``"type": "object"``.
        function: Called with the validated arguments.
        output_schema: JSON Schema of the data, if known.
        pass_dict: Call ``function(arguments)`` instead of ``function(**arguments)``.
        blocking, source_id, version, tags, annotations, requires_confirmation,
        timeout_s: as on ``BaseTool``.

    Raises:
        RegistrationError: the schema is not a valid JSON Schema or not an object schema.
    """

    def __init__(
        self,
        *,
        name: str,
        description: str,
        input_schema: dict[str, Any],
        function: Callable[..., Any],
        output_schema: dict[str, Any] | None = None,
        pass_dict: bool = False,
        blocking: bool = True,
        source_id: str | None = None,
        version: str = "1.0.0",
        tags: tuple[str, ...] = (),
        annotations: ToolAnnotations | None = None,
        requires_confirmation: bool = False,
        timeout_s: float | None = None,
    ) -> None:
        if input_schema.get("type") != "object":
            raise RegistrationError(
                f'tool {name!r}: input_schema must have "type": "object", '
                f"got {input_schema.get('type')!r}"
            )
        self._validator = compile_schema(input_schema)
        self.name = name
        self.description = description
        self.input_schema = input_schema
        self.output_schema = output_schema
        self.function = function
        self.pass_dict = pass_dict
        self.blocking = blocking
        self.source_id = source_id
        self.version = version
        self.tags = tags
        self.annotations = annotations or ToolAnnotations()
        self.requires_confirmation = requires_confirmation
        self.timeout_s = timeout_s
        self._is_async = inspect.iscoroutinefunction(function)
        self._wants_ctx = "ctx" in inspect.signature(function).parameters
        self._patterns = has_patterns(input_schema)

    async def execute(
        self, arguments: Arguments = None, ctx: ToolContext | None = None
    ) -> ToolResult:
        """``BaseTool.execute``; arguments checked off the event loop when the schema has patterns."""
        if not self._patterns:
            return await super().execute(arguments, ctx)
        start = perf_counter()
        try:
            checked = await asyncio.to_thread(self.validate_input, arguments)
        except InvalidArgumentsError as exc:
            metadata = self._metadata(ctx or EMPTY_CONTEXT, start)
            return error_result("validation", exc.message, metadata, details=exc.details)
        return await super().execute(_Checked(checked), ctx)

    def validate_input(self, arguments: Arguments) -> dict[str, Any]:
        """Prepare the arguments and validate them against ``input_schema``.

        Preparing (``core.arguments``) drops strict-mode nulls, restores maps and
        refuses undeclared names.

        Raises:
            InvalidArgumentsError: invalid JSON, an undeclared argument or schema
                violations, field by field.
        """
        if type(arguments) is _Checked:
            return arguments
        return check_arguments(
            self.name, self.input_schema or {}, self._validator, arguments, self.argument_shape
        )

    def execute_internal(self, request: dict[str, Any], ctx: ToolContext) -> Any:
        """Call ``function`` with the validated arguments."""
        extra = {"ctx": ctx} if self._wants_ctx else {}
        if self.pass_dict:
            return self.function(request, **extra)
        return self.function(**request, **extra)
