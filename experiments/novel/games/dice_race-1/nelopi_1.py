"""nelopi_1: a generated dice_race game (`cwm games generate dice_race --seed 1`, generator version 1).

Rules: nelopi_1.md (rulebook tier) and nelopi_1.spec.md (spec tier), both written from PARAMS.
Load it as `path/to/nelopi_1.py:nelopi_1`.
"""

from cwm.games.generated import dice_race, require_version

require_version(1)
PARAMS = dice_race.DiceRaceParams(track=14, pieces=1, faces=(1, 2, 3, 4, 6), weights=(3, 3, 3, 1, 3), capture=True, safe=(7,), shortcuts=(), exact_finish=False, extra_turn=True, roll_limit=60)
GAME = dice_race.build_game("nelopi_1", PARAMS)
