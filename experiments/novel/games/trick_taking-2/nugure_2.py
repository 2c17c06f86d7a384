"""nugure_2: a generated trick_taking game (`cwm games generate trick_taking --seed 2`, generator version 1).

Rules: nugure_2.md (rulebook tier) and nugure_2.spec.md (spec tier), both written from PARAMS.
Load it as `path/to/nugure_2.py:nugure_2`.
"""

from cwm.games.generated import require_version, trick_taking

require_version(1)
PARAMS = trick_taking.TrickParams(suits=3, ranks=5, hand=3, trump='turned', trump_suit='', follow='follow', scoring='ranks', last_bonus=True)
GAME = trick_taking.build_game("nugure_2", PARAMS)
