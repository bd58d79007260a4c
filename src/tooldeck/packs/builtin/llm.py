"""``llm``: text generation through any OpenAI-compatible endpoint (seed 001 LLMTool).

Example::

    await tool.execute({"prompt": "Summarise these results", "context": {"results": [...]}})
    # data: {"text": "...", "model": "gemma-3-270m", "finish_reason": "stop", "usage": {...}}
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, Field

from tooldeck.core.context import ToolContext
from tooldeck.core.definition import ToolAnnotations
from tooldeck.core.model_client import openai_client
from tooldeck.core.tool import BaseTool
from tooldeck.exceptions import ToolFailure, ToolUnavailableError, TransientToolError
from tooldeck.packs.builtin.config import LLMConfig

__all__ = ["LLMRequest", "LLMResponse", "LLMTool"]


class LLMRequest(BaseModel):
    """Arguments of ``llm``."""

    prompt: str = Field(min_length=1, description="What to write.")
    context: dict[str, Any] = Field(
        default_factory=dict, description="Data the text should be based on (sent as JSON)."
    )
    system: str | None = Field(None, description="System instructions.")
    model: str | None = Field(None, description="Model; default: the configured one.")
    temperature: float | None = Field(None, ge=0, le=2, description="Sampling temperature.")
    max_tokens: int | None = Field(None, gt=0, le=32_000, description="Longest completion.")


class LLMResponse(BaseModel):
    """A completion."""

    text: str
    """The generated text."""
    model: str
    """The model that answered."""
    finish_reason: str | None = None
    """``stop``, ``length``, ..."""
    usage: dict[str, int] | None = None
    """Token counts, when the endpoint reports them."""


class LLMTool(BaseTool[LLMRequest, LLMResponse]):
    """Generates text with a model behind an OpenAI-compatible chat completions API.

    Semantics:
        ``context`` is sent after the prompt as a JSON block the model is told to
        base its answer on. Not configured (no ``base_url`` and no ``model``) →
        ``unavailable`` saying how to configure it. Connection failures, timeouts,
        429 and 5xx are retryable errors; 401/403 are ``denied``.

    Args:
        config: Endpoint, key, default model and sampling.
    """

    name = "llm"
    source_id = "tool:llm:v1"
    description = (
        "Generate text with a language model (summaries, drafts, synthesis of results). "
        "Pass the data to use in `context`."
    )
    RequestModel = LLMRequest
    ResponseModel = LLMResponse
    annotations = ToolAnnotations(title="LLM", read_only=True, open_world=True)
    tags = ("builtin", "llm")

    def __init__(self, config: LLMConfig) -> None:
        self.config = config
        self.timeout_s = config.timeout_s + 5
        self._client: Any = None

    def client(self) -> Any:
        """The ``openai.AsyncOpenAI`` client (created on first use)."""
        if self._client is None:
            config = self.config
            try:
                self._client = openai_client(
                    "llm",
                    config.base_url,
                    config.api_key,
                    config.timeout_s,
                    max_retries=0,  # retries are the policy layer's job
                )
            except ImportError as exc:
                raise ToolUnavailableError(str(exc), retryable=False) from None
        return self._client

    async def aclose(self) -> None:
        """Close the HTTP client (the runtime calls it on exit)."""
        if self._client is not None:
            await self._client.close()
            self._client = None

    async def execute_internal(self, request: LLMRequest, ctx: ToolContext) -> LLMResponse:
        """Ask the model (see the class docstring)."""
        config = self.config
        model = request.model or config.model
        if config.base_url is None and config.model is None:
            raise ToolUnavailableError(
                "llm is not configured. Set [builtin.llm] in tooldeck.toml: base_url = "
                '"http://127.0.0.1:8000/v1" (any OpenAI-compatible endpoint), model = '
                '"<model name>", and api_key if the endpoint needs one',
                retryable=False,
            )
        if model is None:
            raise ToolUnavailableError(
                "llm has no model: set builtin.llm.model or pass `model`", retryable=False
            )
        messages: list[dict[str, str]] = []
        if request.system:
            messages.append({"role": "system", "content": request.system})
        content = request.prompt
        if request.context:
            content += (
                "\n\nBase the answer on this data:\n```json\n"
                + json.dumps(request.context, indent=1, default=str)
                + "\n```"
            )
        messages.append({"role": "user", "content": content})
        import openai

        try:
            completion = await self.client().chat.completions.create(
                model=model,
                messages=messages,
                temperature=request.temperature
                if request.temperature is not None
                else config.temperature,
                max_tokens=request.max_tokens or config.max_tokens,
            )
        except (openai.APIConnectionError, openai.APITimeoutError, openai.RateLimitError) as exc:
            raise TransientToolError(f"llm: {type(exc).__name__}: {exc}") from None
        except openai.AuthenticationError as exc:
            raise ToolFailure(f"llm: the endpoint refused the API key: {exc}") from None
        except openai.APIStatusError as exc:
            error = TransientToolError if exc.status_code >= 500 else ToolFailure
            raise error(f"llm: HTTP {exc.status_code}: {exc.message}") from None
        if not completion.choices:
            raise TransientToolError("llm: the endpoint returned no choices")
        choice = completion.choices[0]
        usage = completion.usage.model_dump() if completion.usage is not None else None
        return LLMResponse(
            text=choice.message.content or "",
            model=completion.model or model,
            finish_reason=choice.finish_reason,
            usage={k: v for k, v in (usage or {}).items() if isinstance(v, int)} or None,
        )
