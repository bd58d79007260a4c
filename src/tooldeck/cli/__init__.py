"""Entry point: the ``tooldeck`` command.

``main`` imports the command lazily so that a library-only install (``pip install
tooldeck``, no ``[server]`` extra) gets a sentence saying what to install, not an
import traceback.
"""

from __future__ import annotations

import sys

__all__ = ["main"]


def main() -> None:
    """Run the ``tooldeck`` command (``cli.app``).

    Exits 2 with ``pip install 'tooldeck[server]'`` when a library the command needs is
    not installed.
    """
    try:
        from tooldeck.cli.app import main as run
    except ModuleNotFoundError as exc:
        sys.stderr.write(
            f"tooldeck: the command needs the {exc.name!r} package, which is not installed;\n"
            "install the command's extra: pip install 'tooldeck[server]' (or 'tooldeck[all]')\n"
        )
        sys.exit(2)
    run()
