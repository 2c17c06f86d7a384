"""The seeded task generator: each family (``cwm.nfg.families``) draws its game and question; here they are
disguised, solved and written as chat messages.

Item ``i`` of family ``f`` draws everything from ``np.random.default_rng([seed, FAMILIES.index(f), i])``,
so a task never changes when other families or counts are asked for, and a run is reproducible bit for bit.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from cwm.nfg import render
from cwm.nfg.families import get as get_family
from cwm.nfg.families import stream
from cwm.nfg.game import NfgFormatError
from cwm.nfg.tasks import FAMILIES, Task, solve
from cwm.types import JSON


def generate(families: Sequence[str] = FAMILIES, n: int = 50, *, seed: int = 0) -> list[Task]:
    """``n`` tasks of each family, in family order.

    Args:
      families: which families (names from ``FAMILIES``).
      n: items per family.
      seed: the run's seed; item ``i`` of family ``f`` uses the stream ``[seed, FAMILIES.index(f), i]``.

    Raises:
      NfgFormatError: an unknown family or a negative ``n`` (a ``ValueError``).
    """
    unknown = [f for f in families if f not in FAMILIES]
    if unknown or n < 0:
        raise NfgFormatError(f"generate: unknown families {unknown} (known: {list(FAMILIES)})" if unknown
                             else f"generate: n must be >= 0, got {n}")
    return [generate_one(f, i, seed=seed) for f in families for i in range(n)]


def generate_one(family: str, index: int, *, seed: int = 0) -> Task:
    """Item ``index`` of ``family`` for ``seed`` (see ``generate``).

    Raises:
      NfgFormatError: an unknown family.
    """
    chosen = get_family(family)
    rng = np.random.default_rng([seed, stream(family), index])
    disguise: dict[str, JSON] = {
        "style": str(rng.choice(render.STYLES)),
        "unit": str(rng.choice(["points", "dollars"])),
        "probabilities": str(rng.choice(render.PROBABILITY_STYLES)),
    }
    game, me, question = chosen.generate(rng, disguise)
    key = solve(family, game, me, question)
    messages = render.messages(family, game, me, question, key, disguise=disguise)
    return Task(f"{family}-{seed}-{index}", family, game, me, question, key, messages, disguise)
