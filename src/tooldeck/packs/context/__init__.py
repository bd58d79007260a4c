"""The context pack: what the user's own sources say (seed 000's user context).

One tool, ``user_context(category, action, ...)``, over a ``ContextBridge`` service
that fetches from ``ContextAdapter``s (finance statements, calendars, tasks, weather,
commute) concurrently, caches each category, and lets each adapter shape its own data
for tools (``normalize_for_tools``).
"""
