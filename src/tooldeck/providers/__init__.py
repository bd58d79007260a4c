"""Providers: the ``ToolsProvider`` interface, the local registry, MCP, and the wrappers."""

from tooldeck.providers.approvals import Approval, ApprovalStore
from tooldeck.providers.base import ToolsProvider
from tooldeck.providers.breaker import BreakerState, CircuitBreaker
from tooldeck.providers.composite import CompositeToolsProvider
from tooldeck.providers.confirming import ConfirmingToolsProvider
from tooldeck.providers.filtered import FilteredToolsProvider
from tooldeck.providers.mcp import MCPServerConfig, MCPToolsProvider
from tooldeck.providers.observed import ObservedProvider
from tooldeck.providers.policy import (
    CallPolicyOverride,
    PolicyConfig,
    PolicyOverride,
    PolicyProvider,
    ProfilePolicy,
    ToolPolicy,
)
from tooldeck.providers.prefixed import PrefixedToolsProvider
from tooldeck.providers.rate_limit import RateLimiter
from tooldeck.providers.registry import ToolRegistry
from tooldeck.providers.wrapper import WrapperProvider

__all__ = [
    "Approval",
    "ApprovalStore",
    "BreakerState",
    "CallPolicyOverride",
    "CircuitBreaker",
    "CompositeToolsProvider",
    "ConfirmingToolsProvider",
    "FilteredToolsProvider",
    "MCPServerConfig",
    "MCPToolsProvider",
    "ObservedProvider",
    "PolicyConfig",
    "PolicyOverride",
    "PolicyProvider",
    "PrefixedToolsProvider",
    "ProfilePolicy",
    "RateLimiter",
    "ToolPolicy",
    "ToolRegistry",
    "ToolsProvider",
    "WrapperProvider",
]
