"""The trick-taking family: two players with hidden hands play tricks, with rules drawn from a seed.

Parameters (``TrickParams``) change the rules: the deck and the hands (cards left undealt stay unseen), the
trump (none, a suit fixed by the seed, or the suit of a card turned up by chance after the deal), the
follow rule (any card, follow suit, or follow suit and beat the led card when able), the scoring (tricks
won, the ranks of the cards won, or fewest tricks) and a bonus for the last trick. Hands are private: the
family has imperfect information. ``rules(params)`` states each parameter as one sentence in each tier.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import numpy as np
import pyspiel

from cwm.games.generated.common import (
    SUIT_NAMES,
    SUITS,
    Rule,
    card_id,
    card_name,
    check_params,
    draw_cards,
    game_type,
    register_game,
)

FAMILY = "trick_taking"


@dataclasses.dataclass(frozen=True)
class TrickParams:
    """The rules of one trick-taking game.

    Attributes:
      suits, ranks: the deck: ``suits`` suits (the first of ``SHDC``), ranks 1 to ``ranks`` in each.
      hand: cards dealt to each player (the rest stay face down, unseen, for the whole game).
      trump: ``"none"``, ``"fixed"`` (the suit ``trump_suit``) or ``"turned"`` (after the deal a card of the
        undealt ones is turned face up, chosen at random; its suit is trump).
      trump_suit: the fixed trump suit (a letter), else ``""``.
      follow: ``"free"`` (any card), ``"follow"`` (a player holding the led suit must play it) or ``"head"``
        (must follow, and with a higher card of the led suit than the led card when it holds one).
      scoring: ``"tricks"`` (one point a trick), ``"ranks"`` (the ranks of the cards won) or ``"avoid"``
        (one point a trick; the lower score wins).
      last_bonus: the winner of the last trick adds 1 to its score.
    """

    suits: int
    ranks: int
    hand: int
    trump: str
    trump_suit: str
    follow: str
    scoring: str
    last_bonus: bool

    @property
    def deck(self) -> int:
        return self.suits * self.ranks

    @property
    def deal_steps(self) -> int:
        return 2 * self.hand + int(self.trump == "turned")


def draw(rng: np.random.Generator) -> TrickParams:
    """The parameters of one game, every rule switched on or off by ``rng`` (consumed in a fixed order)."""
    suits, ranks = int(rng.integers(3, 5)), int(rng.integers(4, 7))
    hand = int(rng.integers(3, min(6, suits * ranks // 2 - 1) + 1))
    trump = str(rng.choice(["none", "fixed", "turned"]))
    suit = SUITS[int(rng.integers(suits))] if trump == "fixed" else ""
    return TrickParams(suits=suits, ranks=ranks, hand=hand, trump=trump, trump_suit=suit,
                       follow=str(rng.choice(["free", "follow", "head"])),
                       scoring=str(rng.choice(["tricks", "ranks", "avoid"])), last_bonus=bool(rng.random() < 0.4))


def suit_of(card: int, ranks: int) -> str:
    return SUITS[card // ranks]




# ---------------------------------------------------------------------------------------------------
# The engine


def check(p: TrickParams) -> None:
    """Refuses parameters the engine cannot play, in one line (``check_params``)."""
    check_params(FAMILY, {
        "suits must be 1 to 4 and ranks 2 to 9": not (1 <= p.suits <= 4 and 2 <= p.ranks <= 9),
        "hand must be >= 1, with every hand and a turned card dealt from the deck":
            p.hand < 1 or 2 * p.hand + int(p.trump == "turned") > p.suits * p.ranks,
        "trump must be none, fixed (with a trump_suit of the deck) or turned": p.trump not in ("none", "fixed", "turned")
            or (p.trump == "fixed") != (p.trump_suit in SUITS[:p.suits] and p.trump_suit != ""),
        "follow must be free, follow or head": p.follow not in ("free", "follow", "head"),
        "scoring must be tricks, ranks or avoid": p.scoring not in ("tricks", "ranks", "avoid"),
    })


def build_game(name: str, params: TrickParams) -> type[pyspiel.Game]:
    """An OpenSpiel game class (no parameters of its own) playing ``params``, registered as ``name``."""
    check(params)
    gtype = game_type(name, f"{name} (generated {FAMILY} game)", chance=True, perfect=False)
    f = facts(params)
    info = pyspiel.GameInfo(num_distinct_actions=params.deck, max_chance_outcomes=params.deck, num_players=2,
                            min_utility=-1.0, max_utility=1.0, utility_sum=0.0, max_game_length=f["max_game_length"])
    return register_game(gtype, info, TrickState, params, f"TrickGame_{name}")


class TrickState(pyspiel.State):
    """Hands, the turned card, the trick on the table, the leader, each player's score and the public plays."""

    def __init__(self, game: pyspiel.Game, params: TrickParams):
        super().__init__(game)
        self.p = params
        self.hands: list[list[int]] = [[], []]
        self.dealt: list[list[int]] = [[], []]  # each hand as dealt (the information state keeps it)
        self.turned: int | None = None
        self.trick: list[int] = []
        self.leader = 0
        self.scores = [0, 0]
        self.tricks = [0, 0]
        self.plays: list[list[Any]] = []  # [player, card name] in the order played: public

    @property
    def dealing(self) -> bool:
        return len(self.dealt[0]) + len(self.dealt[1]) + (self.turned is not None) < self.p.deal_steps

    def current_player(self) -> int:
        if self.is_terminal():
            return pyspiel.PlayerId.TERMINAL
        return pyspiel.PlayerId.CHANCE if self.dealing else (self.leader + len(self.trick)) % 2

    def chance_outcomes(self) -> list[tuple[int, float]]:
        seen = set(self.dealt[0]) | set(self.dealt[1])
        left = [c for c in range(self.p.deck) if c not in seen]
        return [(c, 1.0 / len(left)) for c in left]

    def trump_suit(self) -> str | None:
        if self.p.trump == "fixed":
            return self.p.trump_suit
        return suit_of(self.turned, self.p.ranks) if self.turned is not None else None

    def _legal_actions(self, player: int) -> list[int]:
        hand = sorted(self.hands[player])
        if not self.trick or self.p.follow == "free":
            return hand
        led = self.trick[0]
        same = [c for c in hand if suit_of(c, self.p.ranks) == suit_of(led, self.p.ranks)]
        higher = [c for c in same if c > led]
        if self.p.follow == "head" and higher:
            return higher
        return same or hand

    def _apply_action(self, action: int) -> None:
        if self.is_terminal():
            raise ValueError(f"{self.get_game()}: the game is over; action {action} cannot be played")
        if self.dealing:
            if action not in [c for c, _ in self.chance_outcomes()]:
                raise ValueError(f"{self.get_game()}: card {action} cannot be dealt now")
            step = len(self.dealt[0]) + len(self.dealt[1])
            if step < 2 * self.p.hand:
                self.dealt[step % 2].append(action)
                self.hands[step % 2].append(action)
            else:
                self.turned = action
            return
        player = self.current_player()
        if action not in self._legal_actions(player):
            raise ValueError(f"{self.get_game()}: action {action} is not legal for player {player}")
        self.hands[player].remove(action)
        self.trick.append(action)
        self.plays.append([player, card_name(action, self.p.ranks)])
        if len(self.trick) == 2:
            self._end_trick()

    def trick_winner(self) -> int:
        """Who wins the two cards on the table: the higher trump, else the higher card of the led suit."""
        trump, ranks = self.trump_suit(), self.p.ranks
        led, other = self.trick
        if suit_of(other, ranks) == suit_of(led, ranks):
            second_wins = other > led
        else:
            second_wins = suit_of(other, ranks) == trump
        return (1 - self.leader) if second_wins else self.leader

    def _end_trick(self) -> None:
        winner = self.trick_winner()
        self.tricks[winner] += 1
        self.scores[winner] += (sum(c % self.p.ranks + 1 for c in self.trick) if self.p.scoring == "ranks" else 1)
        if self.p.last_bonus and not self.hands[0] and not self.hands[1]:
            self.scores[winner] += 1
        self.trick, self.leader = [], winner

    def _action_to_string(self, player: int, action: int) -> str:
        verb = "deal" if player == pyspiel.PlayerId.CHANCE else "play"
        return f"{verb} {card_name(action, self.p.ranks)}"

    def is_terminal(self) -> bool:
        return not self.dealing and not self.hands[0] and not self.hands[1]

    def returns(self) -> list[float]:
        if not self.is_terminal() or self.scores[0] == self.scores[1]:
            return [0.0, 0.0]
        first_ahead = self.scores[0] > self.scores[1]
        first_wins = first_ahead != (self.p.scoring == "avoid")
        return [1.0, -1.0] if first_wins else [-1.0, 1.0]

    def observation_for(self, player: int) -> dict[str, Any]:
        """What ``player`` sees now: its hand, the table, the trump, the scores; never the other hand."""
        names = [card_name(c, self.p.ranks) for c in sorted(self.hands[player])]
        turned = card_name(self.turned, self.p.ranks) if self.turned is not None else None
        return {"hand": names, "trick": [card_name(c, self.p.ranks) for c in self.trick], "turned": turned,
                "trump": self.trump_suit(), "leader": self.leader, "to_move": (self.leader + len(self.trick)) % 2,
                "tricks": list(self.tricks), "scores": list(self.scores)}

    def information_for(self, player: int) -> dict[str, Any]:
        """Everything ``player`` has seen: its hand as dealt, the turned card and every card played."""
        turned = card_name(self.turned, self.p.ranks) if self.turned is not None else None
        return {"player": player, "dealt": [card_name(c, self.p.ranks) for c in self.dealt[player]],
                "turned": turned, "plays": [list(p) for p in self.plays]}

    def resample_from_infostate(self, player_id: int, probability_sampler: Any) -> TrickState:
        """A state with the same information state for ``player_id``: the other hand's unplayed cards redrawn.

        They are drawn uniformly, without replacement, from the cards ``player_id`` has not seen, less those
        the other player's plays rule out (a suit it did not follow; with ``head``, the cards of the led suit
        above a led card it did not beat). ``probability_sampler()`` (floats in [0, 1)) supplies the
        randomness. Every consistent deal can come out; it is not the posterior of any opponent's policy.
        """
        other = 1 - player_id
        played = {c for _, name in self.plays for c in [card_id(name, self.p.ranks)]}
        hidden = [c for c in self.dealt[other] if c not in played]
        seen = set(self.dealt[player_id]) | played | ({self.turned} if self.turned is not None else set())
        pool = [c for c in range(self.p.deck) if c not in seen and c not in self.ruled_out(other)]
        redrawn = iter(draw_cards(pool, len(hidden), probability_sampler))
        history, state = [int(a) for a in self.history()], self.get_game().new_initial_state()
        for i, action in enumerate(history):
            if i < 2 * self.p.hand and i % 2 == other and action in hidden:
                action = next(redrawn)
            state.apply_action(action)
        return state

    def ruled_out(self, player: int) -> set[int]:
        """The cards ``player`` cannot be holding unplayed, by its plays as second to a trick."""
        out: set[int] = set()
        ranks = self.p.ranks
        for i in range(1, len(self.plays), 2):
            (_, led_name), (who, name) = self.plays[i - 1], self.plays[i]
            led, card = card_id(led_name, ranks), card_id(name, ranks)
            if who != player or self.p.follow == "free":
                continue
            suit = [c for c in range(self.p.deck) if suit_of(c, ranks) == suit_of(led, ranks)]
            if suit_of(card, ranks) != suit_of(led, ranks):
                out.update(suit)
            elif self.p.follow == "head" and card < led:
                out.update(c for c in suit if c > led)
        return out

    def __str__(self) -> str:
        whole = self.observation_for(0)
        whole.pop("hand")
        whole["hands"] = [[card_name(c, self.p.ranks) for c in sorted(h)] for h in self.hands]
        return json.dumps(whole, separators=(",", ":"))


# ---------------------------------------------------------------------------------------------------
# The rules, one sentence per parameter in each tier


def rules(params: TrickParams) -> list[Rule]:
    """Each parameter's rule in both tiers, in the order the rules texts give them."""
    p = params
    suits = ", ".join(f"{SUIT_NAMES[s]} ({s})" for s in SUITS[:p.suits])
    deck = (f"The deck has {p.deck} cards: {p.suits} suits, {suits}, each with ranks 1 (low) to {p.ranks} "
            f"(high); a card is written suit then rank, like {SUITS[1]}{p.ranks}.")
    hand = (f"The cards are shuffled and {p.hand} are dealt to each player, one at a time, the first player first; "
            f"the other {p.deck - 2 * p.hand} stay face down and unseen for the whole game.")
    play = ("The first player leads the first trick: it plays a card face up, then the other player plays one; "
            "the winner of a trick leads the next, until all cards in hand are played.")
    return [
        Rule("suits,ranks", [p.suits, p.ranks], deck, deck + " Card id = suit index (S = 0, H, D, C) * "
             f"{p.ranks} + rank - 1."),
        Rule("hand", p.hand, hand, hand + " Chance actions are `deal <card>`, each card not yet dealt equally likely."),
        Rule("play", "fixed", play, play + " Actions are `play <card>` (id = card id)."),
        Rule("follow", p.follow, _follow_sentence(p), _follow_sentence(p)),
        Rule("trump", [p.trump, p.trump_suit], _trump_sentence(p), _trump_sentence(p)),
        Rule("scoring", p.scoring, _scoring_sentence(p), _scoring_sentence(p)),
        Rule("last_bonus", p.last_bonus, _bonus_sentence(p), _bonus_sentence(p)),
        Rule("winner", "fixed", _winner_sentence(p), _winner_sentence(p)),
    ]


def _follow_sentence(p: TrickParams) -> str:
    if p.follow == "free":
        return "Any card in hand may be played to a trick; there is no need to follow suit."
    if p.follow == "follow":
        return ("The player who plays second to a trick must play a card of the suit led if it has one; if not, "
                "it may play any card.")
    return ("The player who plays second to a trick must play a card of the suit led if it has one, and a "
            "higher one than the card led if it has such a card; with no card of the suit led it may play any "
            "card.")


def _trump_sentence(p: TrickParams) -> str:
    wins = ("a trick is won by the higher trump in it, if any, else by the higher card of the suit led (a card "
            "of another non-trump suit never wins).")
    if p.trump == "fixed":
        return f"{SUIT_NAMES[p.trump_suit].capitalize()} are trumps for the whole game: {wins}"
    if p.trump == "turned":
        return ("After the deal one of the undealt cards, chosen at random, is turned face up and stays on the "
                f"table, never to be played; its suit is trumps for the whole game: {wins}")
    return ("There are no trumps: a trick is won by the higher card of the suit led (a card of another suit "
            "never wins).")


def _scoring_sentence(p: TrickParams) -> str:
    if p.scoring == "ranks":
        return "The winner of a trick scores the ranks of its two cards added together."
    return "The winner of a trick scores 1 point."


def _bonus_sentence(p: TrickParams) -> str:
    if p.last_bonus:
        return "The winner of the last trick scores 1 more point."
    return "The last trick counts like any other."


def _winner_sentence(p: TrickParams) -> str:
    if p.scoring == "avoid":
        return ("When all cards in hand are played, the player with the lower score wins (+1) and the other "
                "loses (-1); equal scores are a draw (0 each).")
    return ("When all cards in hand are played, the player with the higher score wins (+1) and the other loses "
            "(-1); equal scores are a draw (0 each).")


INTRO = "A card game for two players who play tricks from hidden hands."
SECTIONS = [("Cards and deal", ["suits,ranks", "hand", "trump"]), ("Tricks", ["play", "follow"]),
            ("Scoring", ["scoring", "last_bonus", "winner"])]
KNOW = ("Each player sees its own hand, the cards played so far and any card turned face up, but never the "
        "other player's hand or the cards left undealt.")


def spec_format(params: TrickParams) -> str:
    """The spec tier's formats: the observation JSON and the action ids."""
    example = {"hand": ["S1", "H2"], "trick": ["D3"], "turned": None, "trump": None, "leader": 1, "to_move": 0,
               "tricks": [0, 1], "scores": [0, 1]}
    return ("A player's observation is a JSON object such as "
            f"`{json.dumps(example, separators=(',', ':'))}`: its own `hand` (sorted by id), the cards on the "
            "table in the current `trick` in the order played, the `turned` card and the `trump` suit letter "
            "(null when none), the `leader` of the current trick, the player `to_move`, each player's `tricks` "
            f"won and `scores`. There are {params.deck} action ids; the legal ones are listed in increasing id "
            "order. Returns are 0 until the end.")


def facts(params: TrickParams) -> dict[str, Any]:
    """The engine's facts: players, chance, information, the most actions a game can take."""
    return {"players": 2, "chance": True, "information": "imperfect", "outcome": "win/draw/loss",
            "num_distinct_actions": params.deck, "max_chance_outcomes": params.deck,
            "max_game_length": params.deal_steps + 2 * params.hand}


RULES_ON = ("trump_fixed", "trump_turned", "must_follow", "must_head", "rank_scoring", "avoid_tricks",
            "last_trick_bonus", "undealt_cards")


def rules_on(params: TrickParams) -> list[str]:
    """The rules beyond plain no-trump tricks with free play and one point a trick that ``params`` switches on."""
    on = {"trump_fixed": params.trump == "fixed", "trump_turned": params.trump == "turned",
          "must_follow": params.follow == "follow", "must_head": params.follow == "head",
          "rank_scoring": params.scoring == "ranks", "avoid_tricks": params.scoring == "avoid",
          "last_trick_bonus": params.last_bonus, "undealt_cards": params.deck > 2 * params.hand}
    return [rule for rule in RULES_ON if on[rule]]
