"""rizidi_2: a generated dice_race game (`cwm games generate dice_race --seed 2`, generator version 1).

Rules: rizidi_2.md (rulebook tier) and rizidi_2.spec.md (spec tier), both written from PARAMS.
Load it as `path/to/rizidi_2.py:rizidi_2`.
"""

from cwm.games.generated import dice_race, require_version

require_version(1)
PARAMS = dice_race.DiceRaceParams(track=11, pieces=1, faces=(1, 2, 4, 5, 6), weights=(3, 1, 1, 2, 1), capture=False, safe=(), shortcuts=((6, 11),), exact_finish=True, extra_turn=False, roll_limit=48)
GAME = dice_race.build_game("rizidi_2", PARAMS)
