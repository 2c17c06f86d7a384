"""zegipi_3: a generated trick_taking game (`cwm games generate trick_taking --seed 3`, generator version 1).

Rules: zegipi_3.md (rulebook tier) and zegipi_3.spec.md (spec tier), both written from PARAMS.
Load it as `path/to/zegipi_3.py:zegipi_3`.
"""

from cwm.games.generated import require_version, trick_taking

require_version(1)
PARAMS = trick_taking.TrickParams(suits=3, ranks=4, hand=4, trump='none', trump_suit='', follow='head', scoring='ranks', last_bonus=False)
GAME = trick_taking.build_game("zegipi_3", PARAMS)
