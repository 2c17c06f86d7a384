"""Subcommands of the `cwm` CLI: one module per area, each with ``register(subparsers)``."""
