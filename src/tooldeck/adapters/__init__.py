"""tooldeck's tools inside other agent frameworks (an entry point, like the MCP server).

Each adapter gives a framework a profile's view of the tools: every call goes through
that view's stack (policies, confirmation, audit with provenance), and a tool that a
person must approve maps to the framework's own approval mechanism. Each needs its
framework installed (an extra):

- ``openai_agents.openai_agents_tools``: OpenAI Agents SDK ``FunctionTool`` s, with
  tooldeck's strict schemas and ``needs_approval`` (``tooldeck[openai-agents]``);
- ``pydantic_ai.ToolDeckToolset``: a pydantic-ai ``AbstractToolset``; approval through
  its deferred tool requests (``tooldeck[pydantic-ai]``);
- ``langchain.langchain_tools``: LangChain ``StructuredTool`` s, and
  ``langchain.from_langchain``: a LangChain tool as a tooldeck tool
  (``tooldeck[langchain]``).
"""

from __future__ import annotations

__all__: list[str] = []
