"""zepise_1: a generated melding game (`cwm games generate melding --seed 1`, generator version 1).

Rules: zepise_1.md (rulebook tier) and zepise_1.spec.md (spec tier), both written from PARAMS.
Load it as `path/to/zepise_1.py:zepise_1`.
"""

from cwm.games.generated import melding, require_version

require_version(1)
PARAMS = melding.MeldParams(suits=3, ranks=6, hand=6, melds='runs', take_discard=False, layoff=True, knock_limit=4, out_bonus=5, deadwood=2, max_turns=18)
GAME = melding.build_game("zepise_1", PARAMS)
