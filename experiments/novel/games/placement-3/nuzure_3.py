"""nuzure_3: a generated placement game (`cwm games generate placement --seed 3`, generator version 1).

Rules: nuzure_3.md (rulebook tier) and nuzure_3.spec.md (spec tier), both written from PARAMS.
Load it as `path/to/nuzure_3.py:nuzure_3`.
"""

from cwm.games.generated import placement, require_version

require_version(1)
PARAMS = placement.PlacementParams(rows=5, cols=5, k=5, gravity=False, blocked='none', blocked_cells=(), blocked_count=0, capture=0, move_limit=0, misere=False, pie=True)
GAME = placement.build_game("nuzure_3", PARAMS)
