"""Providers: the ``ToolsProvider`` interface, the local registry and the wrappers."""

from tooldeck.providers.base import ToolsProvider
from tooldeck.providers.breaker import BreakerState, CircuitBreaker
from tooldeck.providers.observed import ObservedProvider
from tooldeck.providers.policy import PolicyConfig, PolicyOverride, PolicyProvider, ToolPolicy
from tooldeck.providers.registry import ToolRegistry
from tooldeck.providers.wrapper import WrapperProvider

__all__ = [
    "BreakerState",
    "CircuitBreaker",
    "ObservedProvider",
    "PolicyConfig",
    "PolicyOverride",
    "PolicyProvider",
    "ToolPolicy",
    "ToolRegistry",
    "ToolsProvider",
    "WrapperProvider",
]
