"""Games: the registry (name -> ground truth, rules text, facts), JSON views of states, trajectories and the
kinds of event they hold, the oracle model and each game's hidden information."""

from cwm.games import suite as _suite  # noqa: F401  (registers the suite's further games)
from cwm.games.registry import (  # noqa: F401
    RULES_TIERS,
    GameSpec,
    UnknownGameError,
    action_codec,
    canonical_id,
    check_rules_file,
    choose_view,
    full_state,
    is_rules_label,
    load_game,
    observe,
    register,
    registered,
    resolve,
    rules_label,
    rules_text,
    rules_tiers,
    utility_range,
    with_rules,
)
from cwm.games.views import USER_VIEWS as VIEWS_OF_MODULES

__all__ = ['RULES_TIERS', 'VIEWS_OF_MODULES', 'GameSpec', 'UnknownGameError', 'action_codec', 'canonical_id', 'check_rules_file', 'choose_view', 'full_state', 'is_rules_label', 'load_game', 'observe', 'register', 'registered', 'resolve', 'rules_label', 'rules_text', 'rules_tiers', 'utility_range', 'with_rules']
