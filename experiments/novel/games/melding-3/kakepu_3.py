"""kakepu_3: a generated melding game (`cwm games generate melding --seed 3`, generator version 1).

Rules: kakepu_3.md (rulebook tier) and kakepu_3.spec.md (spec tier), both written from PARAMS.
Load it as `path/to/kakepu_3.py:kakepu_3`.
"""

from cwm.games.generated import melding, require_version

require_version(1)
PARAMS = melding.MeldParams(suits=3, ranks=5, hand=4, melds='both', take_discard=True, layoff=True, knock_limit=6, out_bonus=0, deadwood=1, max_turns=11)
GAME = melding.build_game("kakepu_3", PARAMS)
