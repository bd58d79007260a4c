"""tooldeck: the tool layer for LLM agents."""
