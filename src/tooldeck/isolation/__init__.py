"""Running what is not trusted: code in a sandbox, programs with limits, URLs past a guard.

Shared by the packs that run code or reach the network (``builtin``'s python, shell and
web tools; ``modules``' validation), so that no pack imports another for them. Imports
the core only. See ``README.md`` for the invariants.
"""
