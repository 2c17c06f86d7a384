"""Experiment scripts that reproduce the paper's tables and figures; thin layers over the cwm library.

Run them from the repository root, e.g. ``python experiments/synthesis_table.py --help``; see
docs/experiments.md.
"""
