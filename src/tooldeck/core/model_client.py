"""The client of an OpenAI-compatible model endpoint, for whoever talks to a model.

The chat agent (``[agent]``) and the ``llm`` tool (``[builtin.llm]``) both use it; the
``openai`` package is imported only when a client is made.
"""

from __future__ import annotations

from typing import Any

from pydantic import SecretStr

__all__ = ["openai_client"]


def openai_client(
    who: str, base_url: str | None, api_key: SecretStr | None, timeout_s: float, *, max_retries: int
) -> Any:
    """An ``openai.AsyncOpenAI`` client for any OpenAI-compatible endpoint.

    Args:
        who: What needs it, for the error message (``llm``, ``[agent] model``).
        base_url: Endpoint; None: OpenAI's.
        api_key: Key; None sends a placeholder (local servers ignore it).
        timeout_s: Seconds per request.
        max_retries: The SDK's own retries.

    Raises:
        ImportError: the ``openai`` package is missing; the message says how to install it.
    """
    try:
        import openai
    except ImportError:
        raise ImportError(
            f"{who} needs the openai package: pip install 'tooldeck[builtin]'"
        ) from None
    return openai.AsyncOpenAI(
        base_url=base_url,
        api_key=api_key.get_secret_value() if api_key else "not-needed",
        timeout=timeout_s,
        max_retries=max_retries,
    )
