"""Which agent answers a chat run, from ``[agent]``: the model loop or the intent router.

``runtime.build_runtime`` calls these when it makes the run manager (lazily: ``tooldeck
call`` and ``tooldeck mcp`` import no agent).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tooldeck.agent.base import Agent
from tooldeck.config import AgentSettings
from tooldeck.core.intents import IntentPack
from tooldeck.core.model_client import openai_client
from tooldeck.exceptions import ConfigError
from tooldeck.providers.base import ToolsProvider

__all__ = ["agent_factory", "model_client"]


def model_client(config: AgentSettings) -> Any:
    """The ``openai.AsyncOpenAI`` client of ``[agent]``.

    Raises:
        ConfigError: the ``openai`` package is missing.
    """
    try:
        return openai_client(
            "[agent] model", config.base_url, config.api_key, config.timeout_s, max_retries=1
        )
    except ImportError as exc:
        raise ConfigError(str(exc)) from None


def agent_factory(
    config: AgentSettings, pack: IntentPack | None, client: Any
) -> Callable[[ToolsProvider], Agent]:
    """Makes each run's agent.

    The model loop with ``client`` when ``[agent] model`` is set, else the intent router
    of ``pack`` (a pack's ``answers``); with neither, every run fails saying what to
    configure.
    """
    from tooldeck.agent.model_agent import ModelAgent
    from tooldeck.agent.router_agent import RouterAgent

    model = config.model
    if model is None:
        if pack is None:
            return _no_agent
        agent = RouterAgent(pack)
        return lambda view: agent
    return lambda view: ModelAgent(
        client,
        model,
        view,
        max_steps=config.max_steps,
        temperature=config.temperature,
        max_tokens=config.max_tokens,
        strict_tools=config.strict_tools,
        figures=pack.figures if pack else None,
        defer_tools_over=config.defer_tools_over,
        always_visible=config.always_visible,
    )


def _no_agent(view: ToolsProvider) -> Agent:
    raise ConfigError(
        "the chat agent needs [agent] model (an OpenAI-compatible endpoint) or a pack "
        "with intents (brokerage, knowledge, context) for its intent router"
    )
