"""tanogu_2: a generated melding game (`cwm games generate melding --seed 2`, generator version 1).

Rules: tanogu_2.md (rulebook tier) and tanogu_2.spec.md (spec tier), both written from PARAMS.
Load it as `path/to/tanogu_2.py:tanogu_2`.
"""

from cwm.games.generated import melding, require_version

require_version(1)
PARAMS = melding.MeldParams(suits=3, ranks=5, hand=5, melds='sets', take_discard=True, layoff=True, knock_limit=6, out_bonus=3, deadwood=1, max_turns=10)
GAME = melding.build_game("tanogu_2", PARAMS)
