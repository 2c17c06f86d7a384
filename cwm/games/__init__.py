"""Games: the registry (name -> ground truth, rules text, facts), JSON views of states, trajectories and the
kinds of event they hold, the oracle model and each game's hidden information."""

from cwm.games.registry import (  # noqa: F401
    GameSpec,
    UnknownGameError,
    action_codec,
    canonical_id,
    full_state,
    load_game,
    observe,
    register,
    registered,
    resolve,
    rules_text,
    utility_range,
)

__all__ = ['GameSpec', 'UnknownGameError', 'action_codec', 'canonical_id', 'full_state', 'load_game', 'observe', 'register', 'registered', 'resolve', 'rules_text', 'utility_range']
