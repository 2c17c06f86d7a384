"""zakigo_2: a generated placement game (`cwm games generate placement --seed 2`, generator version 1).

Rules: zakigo_2.md (rulebook tier) and zakigo_2.spec.md (spec tier), both written from PARAMS.
Load it as `path/to/zakigo_2.py:zakigo_2`.
"""

from cwm.games.generated import placement, require_version

require_version(1)
PARAMS = placement.PlacementParams(rows=6, cols=4, k=3, gravity=True, blocked='none', blocked_cells=(), blocked_count=0, capture=0, move_limit=0, misere=True, pie=True)
GAME = placement.build_game("zakigo_2", PARAMS)
