"""``python -m podsearch`` runs the CLI."""

from .cli import main

main()
