"""nuziku_1: a generated placement game (`cwm games generate placement --seed 1`, generator version 1).

Rules: nuziku_1.md (rulebook tier) and nuziku_1.spec.md (spec tier), both written from PARAMS.
Load it as `path/to/nuziku_1.py:nuziku_1`.
"""

from cwm.games.generated import placement, require_version

require_version(1)
PARAMS = placement.PlacementParams(rows=4, cols=7, k=4, gravity=True, blocked='none', blocked_cells=(), blocked_count=0, capture=0, move_limit=0, misere=False, pie=True)
GAME = placement.build_game("nuziku_1", PARAMS)
