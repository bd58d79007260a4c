"""Tools from plain typed functions: ``@tool`` and ``FunctionTool``.

Example::

    @tool(source_id="tool:fx:v1")
    async def convert(amount: float, currency: str = "EUR", ctx: ToolContext | None = None) -> dict:
        \"\"\"Convert US dollars to another currency.

Args:
            amount: Amount in US dollars.
            currency: ISO 4217 code of the target currency.
        \"\"\"

The schema has ``amount`` (required) and ``currency``, with the docstring's
descriptions; ``ctx`` is injected by tooldeck and hidden from the model.
"""

from __future__ import annotations

import inspect
import json
import types
import typing
from collections.abc import Callable
from functools import lru_cache
from typing import Any, TypeVar, overload

import docstring_parser
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, create_model
from pydantic.fields import FieldInfo

from tooldeck.core.context import ToolContext
from tooldeck.core.definition import DataLabel, Effect, ToolAnnotations
from tooldeck.core.schema import model_schema, strip_titles
from tooldeck.core.tool import BaseTool
from tooldeck.exceptions import RegistrationError

__all__ = ["FunctionTool", "tool"]

F = TypeVar("F", bound=Callable[..., Any])


def _output_schema(returns: Any) -> Any:
    """The JSON Schema of a return annotation that is not a model; None if it has none.

    Computed once per annotation (``dict[str, Any]`` is most tools' return): Pydantic
    takes ~80 µs for it, a tenth of a tool's registration.
    """
    try:
        text = _output_schema_json(returns)
    except TypeError:  # an unhashable annotation: computed each time
        return _schema_of(returns)
    return json.loads(text)


@lru_cache(maxsize=256)
def _output_schema_json(returns: Any) -> str:
    return json.dumps(_schema_of(returns))


def _schema_of(returns: Any) -> Any:
    try:
        return strip_titles(TypeAdapter(returns).json_schema())
    except Exception:
        return None


def _is_context(annotation: Any) -> bool:
    if annotation is ToolContext:
        return True
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return any(a is ToolContext for a in typing.get_args(annotation))
    return False


class FunctionTool(BaseTool[BaseModel, Any]):
    """A tool made from a typed Python function (sync or async).

    Semantics:
        The request model is built from the signature: each parameter becomes an
        argument with its annotation (``Any`` when missing) and its default; unknown
        arguments are rejected. Descriptions come from the docstring (Google, NumPy,
        Sphinx or Epydoc style, parsed by ``docstring_parser``): the summary and body
        describe the tool, each parameter entry its argument. A parameter annotated
        ``ToolContext`` receives the call's context and is not part of the schema. A
        return annotation that is a Pydantic model, or any type Pydantic can describe,
        gives the output schema.

    Args:
        function: The function to wrap.
        name: Tool name; defaults to the function's ``__name__``.
        description: Overrides the docstring's description.
        blocking: For a sync function, whether it may block (True: run in a worker
            thread) or is pure in-memory computation (False: run inline).
        source_id, version, tags, annotations, requires_confirmation, timeout_s, labels,
            effects: as on ``BaseTool``.

    Raises:
        RegistrationError: the function takes ``*args``/``**kwargs`` or a parameter's
            annotation cannot be turned into a schema.
    """

    def __init__(
        self,
        function: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        blocking: bool = True,
        source_id: str | None = None,
        version: str = "1.0.0",
        tags: tuple[str, ...] = (),
        annotations: ToolAnnotations | None = None,
        requires_confirmation: bool = False,
        timeout_s: float | None = None,
        labels: tuple[DataLabel, ...] | None = None,
        effects: tuple[Effect, ...] | None = None,
    ) -> None:
        self.function = function
        self.labels, self.effects = labels, effects
        self.name = name or function.__name__
        self.blocking = blocking
        self.source_id = source_id
        self.version = version
        self.tags = tags
        self.annotations = annotations or ToolAnnotations()
        self.requires_confirmation = requires_confirmation
        self.timeout_s = timeout_s
        self._is_async = inspect.iscoroutinefunction(function)

        doc = docstring_parser.parse(inspect.getdoc(function) or "")
        summary = "\n\n".join(p for p in (doc.short_description, doc.long_description) if p)
        self.description = description or summary or self.name
        param_docs = {p.arg_name: p.description for p in doc.params}

        try:
            hints = typing.get_type_hints(function, include_extras=True)
        except Exception as exc:
            raise RegistrationError(f"cannot resolve the type hints of {self.name}: {exc}") from exc
        fields: dict[str, Any] = {}
        self._context_param: str | None = None
        for param in inspect.signature(function).parameters.values():
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                raise RegistrationError(
                    f"{self.name}: *args/**kwargs ({param.name}) cannot be described to a model; "
                    "declare each argument"
                )
            annotation = hints.get(param.name, Any)
            if _is_context(annotation):
                self._context_param = param.name
                continue
            default = ... if param.default is inspect.Parameter.empty else param.default
            if isinstance(default, FieldInfo):  # ``x: str = Field(examples=[...])``
                if default.description is None and param.name in param_docs:
                    default = FieldInfo.merge_field_infos(
                        default, description=param_docs[param.name]
                    )
                fields[param.name] = (annotation, default)
                continue
            fields[param.name] = (
                annotation,
                Field(default, description=param_docs.get(param.name)),
            )
        model_name = (
            "".join(part.title() for part in self.name.replace(".", "_").split("_")) + "Args"
        )
        try:
            self.RequestModel = create_model(
                model_name, __config__=ConfigDict(extra="forbid"), **fields
            )
            model_schema(self.RequestModel)
        except RegistrationError:
            raise
        except Exception as exc:
            raise RegistrationError(f"{self.name}: cannot build the argument model: {exc}") from exc

        returns = hints.get("return")
        if isinstance(returns, type) and issubclass(returns, BaseModel):
            self.ResponseModel = returns
        elif returns not in (None, Any, type(None)):
            self.output_schema = _output_schema(returns)

    def execute_internal(self, request: BaseModel, ctx: ToolContext) -> Any:
        """Call the function with the validated arguments (and the context, if it takes one)."""
        # the request model forbids extra fields, so its __dict__ is exactly the arguments
        if self._context_param is None:
            return self.function(**request.__dict__)
        return self.function(**request.__dict__, **{self._context_param: ctx})


@overload
def tool(function: F, /) -> FunctionTool: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    blocking: bool = True,
    source_id: str | None = None,
    version: str = "1.0.0",
    tags: tuple[str, ...] = (),
    annotations: ToolAnnotations | None = None,
    requires_confirmation: bool = False,
    timeout_s: float | None = None,
    labels: tuple[DataLabel, ...] | None = None,
    effects: tuple[Effect, ...] | None = None,
) -> Callable[[Callable[..., Any]], FunctionTool]: ...


def tool(
    function: Callable[..., Any] | None = None, /, **options: Any
) -> FunctionTool | Callable[[Callable[..., Any]], FunctionTool]:
    """Make a ``FunctionTool`` from a function; use as ``@tool`` or ``@tool(name=...)``.

    The keyword options are those of ``FunctionTool``.
    """
    if function is not None:
        return FunctionTool(function, **options)
    return lambda f: FunctionTool(f, **options)
