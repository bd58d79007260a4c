"""``python -m tooldeck`` runs the CLI."""

from tooldeck.cli import main

main()
