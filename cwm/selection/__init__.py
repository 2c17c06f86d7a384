"""Selection by play inside the models: sample rejection among syntheses of one game, and the value
tournament that picks a value function."""

from cwm.games import utility_range  # noqa: F401  (its former home; the game's utility range is a game fact)
from cwm.selection.rejection import (  # noqa: F401
    DEFAULT_GAMES,
    GAMES_FILE,
    Selection,
    SelectionError,
    SelectionSettings,
    load_records,
    pick_hosts,
    play_games,
    select_models,
)
from cwm.selection.value_tournament import (  # noqa: F401
    Tournament,
    TournamentError,
    TournamentSettings,
    run_tournament,
)
from cwm.selection.values import TOURNAMENT_DIR, ValueResult, synthesize_value  # noqa: F401

__all__ = ['DEFAULT_GAMES', 'GAMES_FILE', 'Selection', 'SelectionError', 'SelectionSettings', 'load_records', 'pick_hosts', 'play_games', 'select_models', 'utility_range', 'Tournament', 'TournamentError',
           'TournamentSettings', 'run_tournament', 'TOURNAMENT_DIR', 'ValueResult', 'synthesize_value']
