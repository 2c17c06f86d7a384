"""The melding family: two players draw, meld and discard from hidden hands, with rules drawn from a seed.

Parameters (``MeldParams``) change the rules: the deck and the hands, which melds count (sets of a rank,
runs in a suit, or both), taking the top discard, laying single cards off onto melds on the table, knocking
with a small hand, and the scoring's stages (the ranks melded, the ranks left in hand counted once or
twice against their holder, a bonus for going out). The returns are the two scores' difference. Hands and
the stock are hidden. ``rules(params)`` states each parameter as one sentence in each tier.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
from typing import Any

import numpy as np
import pyspiel

from cwm.games.generated.common import (
    SUIT_NAMES,
    SUITS,
    Rule,
    check_params,
    game_type,
    register_game,
)
from cwm.games.generated.melding_engine import MeldState

FAMILY = "melding"


@dataclasses.dataclass(frozen=True)
class MeldParams:
    """The rules of one melding game.

    Attributes:
      suits, ranks: the deck (the first ``suits`` of ``SHDC``, ranks 1 to ``ranks``).
      hand: cards dealt to each player; one more is turned up to start the discard pile.
      melds: ``"sets"`` (three of a rank), ``"runs"`` (three in a row of one suit) or ``"both"``.
      take_discard: a player may take the top discard instead of drawing from the stock.
      layoff: a player may add a single card to any meld on the table that it extends.
      knock_limit: 0 (no knocking), else a player whose hand's ranks add up to at most this may knock.
      out_bonus: points for emptying one's hand.
      deadwood: how many times the ranks left in a hand count against its holder at the end.
      max_turns: the game ends after this many turns.
    """

    suits: int
    ranks: int
    hand: int
    melds: str
    take_discard: bool
    layoff: bool
    knock_limit: int
    out_bonus: int
    deadwood: int
    max_turns: int

    @property
    def deck(self) -> int:
        return self.suits * self.ranks

    @property
    def all_melds(self) -> tuple[tuple[int, ...], ...]:
        """Every meld the rules allow, as sorted card ids (their action order)."""
        r = self.ranks
        sets: list[tuple[int, ...]] = [tuple(sorted(s * r + k for s in trio)) for k in range(r)
                for trio in itertools.combinations(range(self.suits), 3)]
        runs: list[tuple[int, ...]] = [(s * r + k, s * r + k + 1, s * r + k + 2) for s in range(self.suits)
                                       for k in range(r - 2)]
        return tuple((sets if self.melds != "runs" else []) + (runs if self.melds != "sets" else []))

    @property
    def discard(self) -> int:
        return 2

    @property
    def lay(self) -> int:
        return 2 + self.deck

    @property
    def meld(self) -> int:
        return 2 + 2 * self.deck

    @property
    def knock(self) -> int:
        return self.meld + len(self.all_melds)


def draw(rng: np.random.Generator) -> MeldParams:
    """The parameters of one game, every rule switched on or off by ``rng`` (consumed in a fixed order)."""
    suits, ranks = int(rng.integers(3, 5)), int(rng.integers(5, 8))
    return MeldParams(suits=suits, ranks=ranks, hand=int(rng.integers(4, 7)),
                      melds=str(rng.choice(["sets", "runs", "both"])), take_discard=bool(rng.random() < 0.6),
                      layoff=bool(rng.random() < 0.5), knock_limit=int(rng.choice([0, 0, 4, 6, 8])),
                      out_bonus=int(rng.choice([0, 3, 5, 8])), deadwood=int(rng.choice([1, 2])),
                      max_turns=int(rng.integers(10, 21)))


# ---------------------------------------------------------------------------------------------------
# The engine


def check(p: MeldParams) -> None:
    """Refuses parameters the engine cannot play, in one line (``check_params``)."""
    check_params(FAMILY, {
        "suits must be 1 to 4 and ranks 3 to 9": not (1 <= p.suits <= 4 and 3 <= p.ranks <= 9),
        "hand must be >= 1, leaving a card in the stock after the deal": p.hand < 1 or 2 * p.hand + 2 > p.deck,
        "melds must be sets, runs or both": p.melds not in ("sets", "runs", "both"),
        "knock_limit and out_bonus must be >= 0, deadwood and max_turns >= 1":
            min(p.knock_limit, p.out_bonus) < 0 or min(p.deadwood, p.max_turns) < 1,
    })


def build_game(name: str, params: MeldParams) -> type[pyspiel.Game]:
    """An OpenSpiel game class (no parameters of its own) playing ``params``, registered as ``name``."""
    check(params)
    gtype = game_type(name, f"{name} (generated {FAMILY} game)", chance=True, perfect=False)
    f = facts(params)
    info = pyspiel.GameInfo(num_distinct_actions=f["num_distinct_actions"], max_chance_outcomes=params.deck,
                            num_players=2, min_utility=-float(f["score_bound"]), max_utility=float(f["score_bound"]),
                            utility_sum=0.0, max_game_length=f["max_game_length"])
    return register_game(gtype, info, MeldState, params, f"MeldGame_{name}")


# ---------------------------------------------------------------------------------------------------
# The rules, one sentence per parameter in each tier


def rules(params: MeldParams) -> list[Rule]:
    """Each parameter's rule in both tiers, in the order the rules texts give them."""
    p = params
    suits = ", ".join(f"{SUIT_NAMES[s]} ({s})" for s in SUITS[:p.suits])
    deck = (f"The deck has {p.deck} cards: {p.suits} suits, {suits}, each with ranks 1 to {p.ranks}; a card is "
            f"written suit then rank, like {SUITS[1]}{p.ranks}.")
    deal = (f"The cards are shuffled; {p.hand} are dealt to each player, one at a time, the first player first, "
            "and the next is turned face up to start the discard pile; the rest form the face-down stock.")
    turn = ("On a turn a player first draws: the top card of the stock, seen only by the drawer"
            f"{', or the top card of the discard pile' if p.take_discard else ''}. It may then put melds and "
            "lay-offs on the table, one at a time, and ends its turn by discarding a card face up.")
    return [
        Rule("suits,ranks", [p.suits, p.ranks], deck, deck + f" Card id = suit index (S = 0, H, D, C) * {p.ranks} "
             "+ rank - 1; chance actions are `card <card>`, each card left in the stock equally likely."),
        Rule("hand", p.hand, deal, deal),
        Rule("take_discard", p.take_discard, turn, turn + f" Actions: `draw` (id 0){', `take` (id 1)' if p.take_discard else ''}, "
             f"`discard <card>` (id {p.discard} + card id)."),
        Rule("melds", p.melds, _melds_sentence(p), _melds_sentence(p) + f" Action `meld <card> <card> <card>`, "
             f"cards in id order (id {p.meld} + the meld's index in the list of allowed melds: sets by rank then "
             "suits, then runs by suit then lowest rank)."),
        Rule("layoff", p.layoff, _layoff_sentence(p), _layoff_sentence(p) + (
            f" Action `lay off <card>` (id {p.lay} + card id)." if p.layoff else "")),
        Rule("knock_limit", p.knock_limit, _knock_sentence(p), _knock_sentence(p) + (
            f" Action `knock` (id {p.knock})." if p.knock_limit else "")),
        Rule("max_turns", p.max_turns, _end_sentence(p), _end_sentence(p)),
        Rule("deadwood", p.deadwood, _score_sentence(p), _score_sentence(p)),
        Rule("out_bonus", p.out_bonus, _bonus_sentence(p), _bonus_sentence(p)),
    ]


def _melds_sentence(p: MeldParams) -> str:
    kinds = {"sets": "a set: three cards of one rank", "runs": "a run: three cards of one suit in consecutive ranks",
             "both": "a set (three cards of one rank) or a run (three cards of one suit in consecutive ranks)"}
    return f"A meld is {kinds[p.melds]}, taken from one's hand and laid face up on the table."


def _layoff_sentence(p: MeldParams) -> str:
    if not p.layoff:
        return "Cards cannot be added to melds already on the table."
    return ("A player may also lay off a single card onto any meld on the table, its own or the other's: a "
            "card of a set's rank, or the card of a run's suit just below or above it; it goes onto the first "
            "meld laid that it fits.")


def _knock_sentence(p: MeldParams) -> str:
    if not p.knock_limit:
        return "There is no knocking."
    return (f"Instead of discarding, a player whose hand's ranks add up to {p.knock_limit} or less may knock, "
            "which ends the game at once.")


def _end_sentence(p: MeldParams) -> str:
    return (f"The game ends as soon as a player has no card left in hand (it goes out, by a meld, a lay-off or "
            f"its discard), after {p.max_turns} turns in all, or when a turn ends with the stock empty.")


def _score_sentence(p: MeldParams) -> str:
    times = "" if p.deadwood == 1 else " twice over"
    return (f"Each player scores the ranks of the cards it put on the table, less the ranks of the cards left "
            f"in its hand{times}.")


def _bonus_sentence(p: MeldParams) -> str:
    if not p.out_bonus:
        return ("Going out earns nothing extra. Each player's result is its score less the other's; both hands "
                "are shown at the end.")
    return (f"A player who goes out scores {p.out_bonus} more. Each player's result is its score less the "
            "other's; both hands are shown at the end.")


INTRO = "A card game for two players who draw, lay down melds and discard, from hands the other cannot see."
SECTIONS = [("Cards and deal", ["suits,ranks", "hand"]), ("A turn", ["take_discard", "melds", "layoff", "knock_limit"]),
            ("End and scoring", ["max_turns", "deadwood", "out_bonus"])]
KNOW = ("Each player sees its own hand, the top of the discard pile, the melds on the table, how many cards "
        "the other holds and the stock holds, and every card put face up; not the other hand, nor the stock, "
        "nor which card the other drew from the stock.")


def spec_format(params: MeldParams) -> str:
    """The spec tier's formats: the observation JSON and the action ids."""
    example = {"hand": ["S1", "H2"], "pile_top": "D3", "pile": 1, "stock": 9, "table": [[0, ["S4", "S5", "S6"]]],
               "other_hand": 4, "to_move": 1, "phase": "draw", "turns": 3, "scores": None}
    return ("A player's observation is a JSON object such as "
            f"`{json.dumps(example, separators=(',', ':'))}`: its own `hand` (sorted by id), the `pile_top` "
            "card and the `pile` and `stock` sizes, the `table` of [owner, cards] melds in the order laid, the "
            "other hand's size (at the end: its cards), the player `to_move`, the `phase` (deal, draw, card, "
            "play, over), the `turns` finished and, at the end, both `scores`. There are "
            f"{params.knock + 1} action ids; the legal ones are listed in increasing id order. Returns are 0 "
            "until the end, then each player's score less the other's.")


def facts(params: MeldParams) -> dict[str, Any]:
    """The engine's facts: players, chance, information, the most actions a game can take, the score bound."""
    total = params.suits * params.ranks * (params.ranks + 1) // 2
    per_turn = 2 + (params.hand + 1) + 1  # draw, its card, every card of a hand out, a discard
    return {"players": 2, "chance": True, "information": "imperfect", "outcome": "payoff",
            "num_distinct_actions": params.knock + 1, "max_chance_outcomes": params.deck,
            "max_game_length": 2 * params.hand + 1 + params.max_turns * per_turn,
            "score_bound": total * (1 + params.deadwood) + params.out_bonus}


RULES_ON = ("sets", "runs", "take_discard", "layoff", "knock", "out_bonus", "double_deadwood")


def rules_on(params: MeldParams) -> list[str]:
    """The rules beyond the plainest melding game that ``params`` switches on."""
    on = {"sets": params.melds != "runs", "runs": params.melds != "sets", "take_discard": params.take_discard,
          "layoff": params.layoff, "knock": bool(params.knock_limit), "out_bonus": bool(params.out_bonus),
          "double_deadwood": params.deadwood == 2}
    return [rule for rule in RULES_ON if on[rule]]
