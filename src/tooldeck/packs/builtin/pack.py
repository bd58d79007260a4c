"""The built-in tools as a ``Pack``: the ``[builtin]`` table, the sandbox, policy defaults."""

from __future__ import annotations

import os

from tooldeck.core.context import ServiceContainer
from tooldeck.core.pack import PackParts
from tooldeck.packs.builtin.config import BuiltinConfig

__all__ = ["BuiltinPack", "pack"]


class BuiltinPack:
    """python, execute_script, files, shell, web, git, github, math, llm (seeds 000-002).

    ``setup`` starts nothing yet: the ``Sandbox`` (registered as a service, closed with
    the runtime) forks its server on first use. The tools that run the caller's code
    default to no circuit breaker: five failures in a row are most often the code's,
    and must not lock a model out while it fixes it.
    """

    name = "builtin"
    config_model = BuiltinConfig

    def setup(self, config: BuiltinConfig, services: ServiceContainer) -> PackParts:
        """The enabled tools; nothing when ``enabled`` is false.

        Raises:
            ConfigError: ``disabled`` names a tool that is not built in.
            ValueError: ``python.user`` does not exist.
            ModuleNotFoundError: the ``[builtin]`` extra is not installed (the runtime
                lists it as a load error, and the rest starts).
        """
        if not config.enabled:
            return PackParts()
        try:
            from tooldeck.packs.builtin.sandbox import Sandbox
            from tooldeck.packs.builtin.toolset import (
                CALLER_CODE_TOOLS,
                builtin_tools,
                make_sandbox,
            )
        except ModuleNotFoundError as exc:
            raise ModuleNotFoundError(
                f"the built-in tools need {exc.name!r}: pip install 'tooldeck[builtin]' "
                "(or set [builtin] enabled = false)",
                name=exc.name,
            ) from None
        sandbox = make_sandbox(config.python, os.environ, config.roots)
        services.register(Sandbox, sandbox)
        tools = builtin_tools(config, environ=os.environ, sandbox=sandbox)
        for tool in tools:  # a tool that holds a client is closed with the runtime
            if hasattr(tool, "aclose"):
                services.register(type(tool), tool)
        no_breaker = {"breaker_enabled": False}
        return PackParts(tools=tools, policy_defaults=dict.fromkeys(CALLER_CODE_TOOLS, no_breaker))


pack = BuiltinPack()
"""The instance the runtime loads (``tooldeck.packs.builtin.pack:pack``)."""
