"""matasi_3: a generated dice_race game (`cwm games generate dice_race --seed 3`, generator version 1).

Rules: matasi_3.md (rulebook tier) and matasi_3.spec.md (spec tier), both written from PARAMS.
Load it as `path/to/matasi_3.py:matasi_3`.
"""

from cwm.games.generated import dice_race, require_version

require_version(1)
PARAMS = dice_race.DiceRaceParams(track=18, pieces=3, faces=(1, 4, 5), weights=(1, 2, 2), capture=True, safe=(13,), shortcuts=((11, 16), (15, 17)), exact_finish=True, extra_turn=False, roll_limit=228)
GAME = dice_race.build_game("matasi_3", PARAMS)
