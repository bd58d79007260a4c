"""Entry point: the ``tooldeck`` command."""
