"""Subcommands of the `cwm` CLI: one module per area, each with ``register(subparsers)``; ``cwm.cli`` finds
them. The commands are the top layer: they parse arguments, resolve the game once and call the library."""

__all__: list[str] = []
