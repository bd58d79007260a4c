"""``python -m tooldeck`` runs the CLI."""

from tooldeck.cli.app import main

main()
