"""Providers: the ``ToolsProvider`` interface, the local registry, MCP, and the wrappers.

The MCP provider and the observed provider (audit store, tracing) are imported on
first use, so that ``import tooldeck`` stays light.
"""

from typing import TYPE_CHECKING, Any

from tooldeck.providers.approvals import Approval, ApprovalStore
from tooldeck.providers.base import ToolsProvider
from tooldeck.providers.breaker import BreakerState, CircuitBreaker
from tooldeck.providers.composite import CompositeToolsProvider
from tooldeck.providers.confirming import ConfirmingToolsProvider
from tooldeck.providers.filtered import FilteredToolsProvider
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
from tooldeck.providers.receipt_file import ReceiptFile
from tooldeck.providers.receipts import ReceiptsProvider
from tooldeck.providers.registry import ToolRegistry
from tooldeck.providers.wrapper import WrapperProvider

if TYPE_CHECKING:
    from tooldeck.providers.credentials import EncryptedCredentialStore
    from tooldeck.providers.mcp import MCPServerConfig, MCPToolsProvider
    from tooldeck.providers.observed import ObservedProvider

_LAZY = {
    "EncryptedCredentialStore": "tooldeck.providers.credentials",
    "MCPServerConfig": "tooldeck.providers.mcp",
    "MCPToolsProvider": "tooldeck.providers.mcp",
    "ObservedProvider": "tooldeck.providers.observed",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'tooldeck.providers' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)


__all__ = [
    "Approval",
    "ApprovalStore",
    "BreakerState",
    "CallPolicyOverride",
    "CircuitBreaker",
    "CompositeToolsProvider",
    "ConfirmingToolsProvider",
    "EncryptedCredentialStore",
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
    "ReceiptFile",
    "ReceiptsProvider",
    "ToolPolicy",
    "ToolRegistry",
    "ToolsProvider",
    "WrapperProvider",
]
