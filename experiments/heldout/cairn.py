"""Cairn: a two-player hidden-hand melding game invented for cwm's held-out measurement (an OpenSpiel Python game).

Rules, at a rulebook's level: ``experiments/heldout/cairn.md``. Not in cwm's registry, so it stays held out;
cwm loads it as ``experiments/heldout/cairn.py:cairn``. Eighteen stones (three colours, ranks 1-6) are dealt
four to a hand and one face up; players draw from the bag or take the top of the discard pile, build cairns
(three of a rank, or three in a row of one colour), add stones to runs on the table, and end the game by
emptying their hand, knocking with a small hand, or running the bag or the turns out. Each player's score is
the ranks it built, less the ranks left in its hand, with bonuses for going out and for knocking low; the
returns are the two scores' difference.

Observation and information-state strings are JSON text (cwm's ``json`` view parses them into dicts).
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pyspiel

COLOURS = ("S", "O", "M")  # slate, ochre, moss
RANKS = 6
NUM_STONES = len(COLOURS) * RANKS
HAND = 4
DEALT = 2 * HAND + 1  # four to each hand, then one face up on the discard pile
MAX_TURNS = 12
KNOCK_LIMIT = 6  # the most a hand may count for its holder to knock
OUT_BONUS, KNOCK_BONUS = 5, 3

# Action ids: draw from the bag, take the top discard, discard / lay off a stone, build a cairn, knock.
DRAW, TAKE = 0, 1
DISCARD = 2
LAY = DISCARD + NUM_STONES
BUILD = LAY + NUM_STONES


def stone_name(stone: int) -> str:
    """``"S3"``: colour letter then rank."""
    return f"{COLOURS[stone // RANKS]}{stone % RANKS + 1}"


def rank(stone: int) -> int:
    return stone % RANKS + 1


def _cairns() -> tuple[tuple[int, ...], ...]:
    sets = [tuple(c * RANKS + r for c in range(len(COLOURS))) for r in range(RANKS)]
    runs = [tuple(c * RANKS + r + i for i in range(3)) for c in range(len(COLOURS)) for r in range(RANKS - 2)]
    return tuple(sets + runs)


CAIRNS = _cairns()
KNOCK = BUILD + len(CAIRNS)
NUM_ACTIONS = KNOCK + 1
MAX_GAME_LENGTH = DEALT + MAX_TURNS * 7  # a turn: draw, its stone, at most five stones out of a hand (or a knock)
_MAX_SCORE = 3 * sum(range(1, RANKS + 1)) + OUT_BONUS + KNOCK_BONUS + 2 * HAND * RANKS

_GAME_TYPE = pyspiel.GameType(
    short_name="cairn",
    long_name="Cairn",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=2,
    min_num_players=2,
    provides_information_state_string=True,
    provides_information_state_tensor=False,
    provides_observation_string=True,
    provides_observation_tensor=False,
    parameter_specification={},
)
_GAME_INFO = pyspiel.GameInfo(
    num_distinct_actions=NUM_ACTIONS,
    max_chance_outcomes=NUM_STONES,
    num_players=2,
    min_utility=-float(_MAX_SCORE),
    max_utility=float(_MAX_SCORE),
    utility_sum=0.0,
    max_game_length=MAX_GAME_LENGTH,
)


def _json(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"))


def extends(stone: int, cairn: list[int]) -> bool:
    """Whether ``stone`` can be laid off on ``cairn``: a run of one colour, ``stone`` that colour's next rank
    at either end (a set of a rank already holds every colour)."""
    colour = stone // RANKS
    ranks = sorted(rank(s) for s in cairn)
    is_run = all(s // RANKS == colour for s in cairn) and len(set(ranks)) == len(ranks)
    return is_run and rank(stone) in (ranks[0] - 1, ranks[-1] + 1)


class CairnGame(pyspiel.Game):
    """The Cairn game (no parameters)."""

    def __init__(self, params: dict | None = None):
        super().__init__(_GAME_TYPE, _GAME_INFO, params or {})

    def new_initial_state(self) -> CairnState:
        return CairnState(self)

    def make_py_observer(self, iig_obs_type: Any = None, params: dict | None = None) -> CairnObserver:
        return CairnObserver(iig_obs_type or pyspiel.IIGObservationType(perfect_recall=False), params)


class CairnState(pyspiel.State):
    """Hands, bag, discard pile, cairns on the table, the turn and its phase, and each player's log of
    (observation, own action) as JSON text (a string, so cloning is cheap)."""

    def __init__(self, game: CairnGame):
        super().__init__(game)
        self.hands: list[list[int]] = [[], []]
        self.out_of_bag: set[int] = set()
        self.discards: list[int] = []
        self.table: list[tuple[int, list[int]]] = []  # (builder, stones) in the order built
        self.built = [0, 0]  # ranks each player has put on the table
        self.turns = 0  # turns finished
        self.phase = "deal"  # deal, draw, stone (the bag's stone for the drawer), play, over
        self.taken: int | None = None  # the stone taken from the discard pile this turn
        self.ended: tuple[str, int | None] | None = None  # how the game ended, and by whom
        self.logs = ["", ""]

    def current_player(self) -> int:
        if self.phase == "over":
            return pyspiel.PlayerId.TERMINAL
        if self.phase in ("deal", "stone"):
            return pyspiel.PlayerId.CHANCE
        return self.turns % 2

    def chance_outcomes(self) -> list[tuple[int, float]]:
        left = [s for s in range(NUM_STONES) if s not in self.out_of_bag]
        return [(s, 1.0 / len(left)) for s in left]

    def _legal_actions(self, player: int) -> list[int]:
        if self.phase == "draw":
            return [a for a, ok in ((DRAW, len(self.out_of_bag) < NUM_STONES), (TAKE, bool(self.discards))) if ok]
        hand = self.hands[player]
        out = [DISCARD + s for s in hand if s != self.taken]
        out += [LAY + s for s in hand if any(extends(s, stones) for _, stones in self.table)]
        out += [BUILD + i for i, cairn in enumerate(CAIRNS) if all(s in hand for s in cairn)]
        if sum(rank(s) for s in hand) <= KNOCK_LIMIT:
            out.append(KNOCK)
        return sorted(out)

    def _apply_action(self, action: int) -> None:
        player = self.current_player()
        self._check_legal(player, action)
        own = _json(self._action_to_string(player, action))  # a chance outcome is no player's own action
        for p in (0, 1):
            self.logs[p] += f"[{self.observation_json(p)},{own if p == player else 'null'}],"
        if player == pyspiel.PlayerId.CHANCE:
            self._deal(action)
        elif action in (DRAW, TAKE):
            self._draw(player, action)
        else:
            self._play(player, action)

    def _check_legal(self, player: int, action: int) -> None:
        legal = ({s for s, _ in self.chance_outcomes()} if player == pyspiel.PlayerId.CHANCE
                 else set(self._legal_actions(player)) if player >= 0 else set())
        if action not in legal:
            raise ValueError(f"cairn: action {action} is not legal for player {player} in state {self}")

    def _deal(self, stone: int) -> None:
        self.out_of_bag.add(stone)
        if self.phase == "stone":
            self.hands[self.turns % 2].append(stone)
            self.phase = "play"
            return
        dealt = len(self.out_of_bag)
        if dealt < DEALT:
            self.hands[(dealt - 1) % 2].append(stone)
        else:
            self.discards.append(stone)
            self.phase = "draw"

    def _draw(self, player: int, action: int) -> None:
        if action == DRAW:
            self.phase = "stone"
        else:
            self.taken = self.discards.pop()
            self.hands[player].append(self.taken)
            self.phase = "play"

    def _play(self, player: int, action: int) -> None:
        hand = self.hands[player]
        if action == KNOCK:
            self._end("knock", player)
            return
        if action >= BUILD:
            stones = list(CAIRNS[action - BUILD])
            self.table.append((player, stones))
        elif action >= LAY:
            stones = [action - LAY]
            next(cairn for _, cairn in self.table if extends(stones[0], cairn)).append(stones[0])
        else:
            stones = [action - DISCARD]
            self.discards.append(stones[0])
        for s in stones:
            hand.remove(s)
        if action >= LAY:
            self.built[player] += sum(rank(s) for s in stones)
        if not hand:
            self._end("out", player)
        elif action < LAY:  # a discard ends the turn, and the game with it when the bag or the turns ran out
            self.taken = None
            if len(self.out_of_bag) == NUM_STONES:
                self._end("bag", None)
            elif self.turns + 1 == MAX_TURNS:
                self._end("turns", None)
            else:
                self.turns += 1
                self.phase = "draw"

    def _end(self, how: str, who: int | None) -> None:
        self.ended = (how, who)
        self.phase = "over"

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            return f"stone {stone_name(action)}"
        if action in (DRAW, TAKE):
            return "draw" if action == DRAW else "take"
        if action == KNOCK:
            return "knock"
        if action >= BUILD:
            return "build " + "-".join(stone_name(s) for s in CAIRNS[action - BUILD])
        return f"{'lay' if action >= LAY else 'discard'} {stone_name(action - (LAY if action >= LAY else DISCARD))}"

    def is_terminal(self) -> bool:
        return self.phase == "over"

    def scores(self) -> list[int]:
        """Each player's score: ranks built, less ranks in hand, plus the going-out and knocking bonuses."""
        out = [self.built[p] - sum(rank(s) for s in self.hands[p]) for p in (0, 1)]
        how, who = self.ended or ("", None)
        if how == "out":
            out[who] += OUT_BONUS  # type: ignore[index]
        elif how == "knock":
            assert who is not None
            held = [sum(rank(s) for s in self.hands[p]) for p in (0, 1)]
            out[who if held[who] < held[1 - who] else 1 - who] += KNOCK_BONUS
        return out

    def returns(self) -> list[float]:
        if not self.is_terminal():
            return [0.0, 0.0]
        s = self.scores()
        return [float(s[0] - s[1]), float(s[1] - s[0])]

    def observation_dict(self, player: int) -> dict[str, Any]:
        """What ``player`` sees: its hand, the other hand's size, the bag, the discard pile's top, the cairns,
        the turn; at the end, the other hand and how the game ended."""
        over = self.phase == "over"
        return {
            "my_hand": [stone_name(s) for s in sorted(self.hands[player])],
            "opponent_hand_size": len(self.hands[1 - player]),
            "bag": NUM_STONES - len(self.out_of_bag),
            "discard_top": stone_name(self.discards[-1]) if self.discards else None,
            "cairns": [{"by": "me" if who == player else "opponent", "stones": [stone_name(s) for s in sorted(c)]}
                       for who, c in self.table],
            "turn": self.turns + 1,  # the turn being played (at the end: the last one)
            "to_move": None if self.phase in ("deal", "stone", "over") else
            ("me" if self.turns % 2 == player else "opponent"),
            "opponent_hand": [stone_name(s) for s in sorted(self.hands[1 - player])] if over else None,
            "ended": _ended_words(self.ended, player),
        }

    def observation_json(self, player: int) -> str:
        return _json(self.observation_dict(player))

    def information_state_json(self, player: int) -> str:
        """Every observation ``player`` had (oldest first, the current one last) and its own actions."""
        return f'{{"player":{player},"events":[{self.logs[player]}[{self.observation_json(player)},null]]}}'

    def __str__(self) -> str:
        return _json({"hands": [[stone_name(s) for s in sorted(h)] for h in self.hands],
                      "discards": [stone_name(s) for s in self.discards], "built": self.built,
                      "turns": self.turns, "phase": self.phase, "ended": self.ended})

    def resample_from_infostate(self, player_id: int, probability_sampler: Any) -> CairnState:
        """A state with the same information state for ``player_id``: the other player's unseen stones redrawn.

        ``probability_sampler()`` (floats in [0, 1)) supplies the randomness. The draw has the right support
        (every consistent deal can come out), not the exact posterior of any opponent policy.
        """
        history = resample_history([int(a) for a in self.history()], player_id, lambda: float(probability_sampler()))
        state = self.get_game().new_initial_state()
        for action in history:
            state.apply_action(action)
        return state


def _ended_words(ended: tuple[str, int | None] | None, player: int) -> str | None:
    if ended is None:
        return None
    how, who = ended
    if how in ("bag", "turns"):
        return "bag empty" if how == "bag" else "turn limit"
    return f"{'I' if who == player else 'opponent'} {'went out' if how == 'out' else 'knocked'}"


def _unseen_steps(actions: list[int], player: int) -> tuple[list[int], list[int]]:
    """(the chance steps, those of them whose stone went to the other player unseen by ``player`` for good)."""
    state = CairnGame().new_initial_state()
    chance: list[int] = []
    hidden: dict[int, int] = {}  # stone -> its step
    for i, action in enumerate(actions):
        if state.is_chance_node():
            chance.append(i)
            dealt = len(state.out_of_bag)
            to = (dealt % 2 if dealt < 2 * HAND else None) if state.phase == "deal" else state.turns % 2
            if to == 1 - player:
                hidden[action] = i
        elif action not in (DRAW, TAKE, KNOCK):  # the stones it puts on the table or the pile are seen
            stones = CAIRNS[action - BUILD] if action >= BUILD else (action - (LAY if action >= LAY else DISCARD),)
            for s in stones:
                hidden.pop(s, None)
        state.apply_action(action)
    return chance, [] if state.is_terminal() else sorted(hidden.values())  # the end shows both hands


def resample_history(actions: list[int], player: int, uniform: Any) -> list[int]:
    """An action history that gives ``player`` the same observations and own actions as ``actions``: the
    stones the other player holds unseen are redrawn, without replacement, from the stones ``player`` cannot
    place (those and the bag's), with ``uniform()`` (floats in [0, 1))."""
    chance, hidden = _unseen_steps(actions, player)
    known = {actions[i] for i in chance if i not in hidden}
    pool = [s for s in range(NUM_STONES) if s not in known]
    out = list(actions)
    for i in hidden:
        out[i] = pool.pop(min(int(uniform() * len(pool)), len(pool) - 1))
    return out


class CairnObserver:
    """Observation (``perfect_recall=False``) or information state (``True``) as JSON strings; no tensors."""

    def __init__(self, iig_obs_type: Any, params: dict | None):
        if params:
            raise ValueError(f"cairn observer: no parameters are supported, got {params}")
        self.perfect_recall = bool(iig_obs_type.perfect_recall)
        self.tensor = np.zeros(0, np.float32)
        self.dict: dict[str, np.ndarray] = {}

    def set_from(self, state: CairnState, player: int) -> None:
        pass

    def string_from(self, state: CairnState, player: int) -> str:
        return state.information_state_json(player) if self.perfect_recall else state.observation_json(player)


pyspiel.register_game(_GAME_TYPE, CairnGame)
