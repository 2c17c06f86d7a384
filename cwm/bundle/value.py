"""A bundle's value function: written into a bundle with the tournament that chose it, and checked at load.

``save_value`` adds the tournament's table (``value_tournament.json``) to a verified bundle, with the winner as
``value.py`` (or, when random rollouts won, without one: an older ``value.py`` goes, as the table says it does
not help), re-hashes the manifest and records the run in its provenance (``provenance.value``), through
``cwm.bundle.update.update_bundle`` (nothing is left half-written).

``value_report`` runs ``cwm.checks.value`` on a bundle's ``value.py`` at load, in the sandbox, on the stored
games replayed in the bundle's model.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from cwm import games
from cwm.bundle.files import VALUE_TABLE
from cwm.bundle.update import update_bundle
from cwm.sandbox import Sandbox
from cwm.sandbox.checkers import value_checker
from cwm.types import JSON, CheckReport, Trajectory

VALUE_FILE = "value.py"


def save_value(bundle: str | Path, winner: str | None, table: dict[str, JSON], provenance: dict[str, JSON]) -> Path:
    """Writes the tournament's outcome into ``bundle`` (a bundle folder whose files match its manifest).

    Args:
      bundle: the bundle folder.
      winner: the winning value module's source, or ``None`` when rollouts won (no ``value.py`` is kept).
      table: the tournament (``Tournament.to_json()``), saved as ``value_tournament.json``.
      provenance: what produced it (LLM, prompts, seed, run folder), saved as the manifest's
        ``provenance.value``.

    Returns:
      the bundle folder.

    Raises:
      BundleError: not a bundle, or one whose files do not match its manifest.
    """
    writes = {VALUE_TABLE: (json.dumps(table, indent=2) + "\n").encode("utf-8")}
    if winner is not None:
        writes[VALUE_FILE] = winner.encode("utf-8")
    return update_bundle(bundle, writes, remove=[VALUE_FILE] if winner is None else [], provenance_key="value",
                         provenance=provenance)


def value_report(sources: Mapping[str, str], spec: games.GameSpec, train: Sequence[Trajectory], *,
                 isolate: bool = True, box: Any = None) -> CheckReport | None:
    """The value checks of a bundle's ``value.py`` on the stored games replayed in its model (``None`` without
    a value file), in the sandbox ``box`` (default: one of its own) unless ``isolate`` is off."""
    if VALUE_FILE not in sources:
        return None
    utility, _ = games.utility_range(spec)
    if not isolate:
        return value_checker(sources["model.py"], train, utility=utility)(sources[VALUE_FILE])
    with contextlib.nullcontext(box) if box is not None else Sandbox() as box:
        return value_checker(sources["model.py"], train, utility=utility, sandbox=box)(sources[VALUE_FILE])


__all__ = ["VALUE_FILE", "save_value", "value_report"]
