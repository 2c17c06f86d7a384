"""Tiny poker (``tiny_poker.py`` beside this file) on an engine without information-state strings: the same
rules and observations, but its observer refuses perfect recall, so ``information_state_string`` raises, as
on engines that never implemented it (OpenSpiel's crazy eights). Registers itself as
"tiny_poker_no_infostate"; cwm loads it as ``path/to/tiny_poker_no_infostate.py:tiny_poker_no_infostate``.
"""

import importlib.util
from pathlib import Path

import pyspiel

_SPEC = importlib.util.spec_from_file_location("tiny_poker_base", Path(__file__).with_name("tiny_poker.py"))
assert _SPEC is not None and _SPEC.loader is not None
_BASE = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(_BASE)

_TYPE = pyspiel.GameType(**{
    **{f: getattr(_BASE._TYPE, f) for f in (
        "dynamics", "chance_mode", "information", "utility", "reward_model", "max_num_players",
        "min_num_players", "provides_information_state_tensor", "provides_observation_string",
        "provides_observation_tensor", "parameter_specification")},
    "short_name": "tiny_poker_no_infostate", "long_name": "Tiny Poker without information states",
    "provides_information_state_string": False,
})


class TinyPokerNoInfostateGame(_BASE.TinyPokerGame):
    def __init__(self, params=None):
        pyspiel.Game.__init__(self, _TYPE, _BASE._INFO, params or {})

    def make_py_observer(self, iig_obs_type=None, params=None):
        if iig_obs_type is not None and iig_obs_type.perfect_recall:
            raise pyspiel.SpielError("InformationStateString is not implemented.")
        return _BASE._Observer(False)


pyspiel.register_game(_TYPE, TinyPokerNoInfostateGame)
