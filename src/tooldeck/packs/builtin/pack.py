"""The built-in tools as a ``Pack``: the ``[builtin]`` table, the sandbox, policy defaults."""

from __future__ import annotations

import os
from pathlib import Path

from tooldeck.core.context import ServiceContainer
from tooldeck.core.pack import PackEnvironment, PackParts
from tooldeck.exceptions import ConfigError
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
            ConfigError: ``disabled`` names a tool that is not built in; ``roots`` is
                unset and its default would be ``/`` or the home folder.
            ValueError: ``python.user`` does not exist.
            ModuleNotFoundError: the ``[builtin]`` extra is not installed (the runtime
                lists it as a load error, and the rest starts).
        """
        if not config.enabled:
            return PackParts()
        try:
            from tooldeck.isolation.sandbox import Sandbox
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
        config = config.model_copy(update={"roots": allowed_roots(config, services)})
        sandbox = make_sandbox(config.python, os.environ, config.roots)
        services.register(Sandbox, sandbox)
        environment = services.get_optional(PackEnvironment)
        data = [environment.data_dir] if environment is not None else []
        tools = builtin_tools(config, environ=os.environ, sandbox=sandbox, excluded=data)
        for tool in tools:  # a tool that holds a client is closed with the runtime
            if hasattr(tool, "aclose"):
                services.register(type(tool), tool)
        no_breaker = {"breaker_enabled": False}
        roots = ", ".join(str(Path(root).resolve()) for root in config.roots)
        return PackParts(
            tools=tools,
            policy_defaults=dict.fromkeys(CALLER_CODE_TOOLS, no_breaker),
            reaches=[f"files, git, shell and python under {roots}"],
        )


def allowed_roots(config: BuiltinConfig, services: ServiceContainer) -> list[Path]:
    """The roots the tools get: as configured, relative ones from the config's folder.

    Unset, the config file's folder (else the current one), unless that is ``/`` or
    the home folder: a desktop client launches a server in ``/``, and a default must
    not hand a model the whole disk (issue 25).

    Raises:
        ConfigError: the default would be ``/`` or the home folder; says how to set it.
    """
    environment = services.get_optional(PackEnvironment)
    base = (environment.config_dir if environment else None) or Path.cwd()
    if "roots" in config.model_fields_set:
        return [base / root.expanduser() for root in config.roots]
    default = base.resolve()
    if default == Path(default.anchor) or default == _home():
        where = (
            "the config file's folder"
            if environment and environment.config_dir
            else ("the current folder")
        )
        raise ConfigError(
            f"[builtin] roots is not set and {where} is {default}: the built-in tools "
            "(files, git, shell, python) would reach everything under it. Set "
            '[builtin] roots = ["/path/to/project"] (or TOOLDECK_BUILTIN__ROOTS), start '
            "from a project folder, or set [builtin] enabled = false"
        )
    return [default]


def _home() -> Path | None:
    try:
        return Path.home().resolve()
    except (RuntimeError, KeyError):  # no HOME and no passwd entry
        return None


pack = BuiltinPack()
"""The instance the runtime loads (``tooldeck.packs.builtin.pack:pack``)."""
