"""kukude_1: a generated trick_taking game (`cwm games generate trick_taking --seed 1`, generator version 1).

Rules: kukude_1.md (rulebook tier) and kukude_1.spec.md (spec tier), both written from PARAMS.
Load it as `path/to/kukude_1.py:kukude_1`.
"""

from cwm.games.generated import require_version, trick_taking

require_version(1)
PARAMS = trick_taking.TrickParams(suits=3, ranks=6, hand=6, trump='none', trump_suit='', follow='free', scoring='ranks', last_bonus=True)
GAME = trick_taking.build_game("kukude_1", PARAMS)
