"""The dice-race family: two players race pieces along one track by the roll of a die, with rules drawn from a seed.

Parameters (``DiceRaceParams``) change the rules: the track and the pieces, a die with chosen faces and
unequal chances (chance nodes with explicit probabilities), captures that send a piece home, safe squares,
shortcuts that carry a piece forward, an exact roll to finish, another roll on the highest face, and a roll
limit after which the game is drawn. ``rules(params)`` states each parameter as one sentence in each tier.
"""

from __future__ import annotations

import dataclasses
import json
from fractions import Fraction
from typing import Any

import numpy as np
import pyspiel

from cwm.games.generated.common import Rule, SharedView, check_params, game_type, register_game

FAMILY = "dice_race"


@dataclasses.dataclass(frozen=True)
class DiceRaceParams:
    """The rules of one dice race.

    Attributes:
      track: squares ``1..track``; ``0`` is home (the start) and ``track + 1`` the finish.
      pieces: pieces per player.
      faces, weights: the die's faces and their weights (a face comes up with ``weight / sum(weights)``).
      capture: ending a move on an opponent's piece (not on a safe square) sends that piece home.
      safe: the safe squares (only with captures).
      shortcuts: ``(foot, head)`` pairs: a piece ending its move on ``foot`` goes on to ``head``.
      exact_finish: the finish must be reached by an exact roll.
      extra_turn: rolling the highest face gives the mover another roll.
      roll_limit: after this many rolls in all, the game is drawn.
    """

    track: int
    pieces: int
    faces: tuple[int, ...]
    weights: tuple[int, ...]
    capture: bool
    safe: tuple[int, ...]
    shortcuts: tuple[tuple[int, int], ...]
    exact_finish: bool
    extra_turn: bool
    roll_limit: int

    @property
    def finish(self) -> int:
        return self.track + 1

    @property
    def pass_action(self) -> int:
        return self.track + 1


def draw(rng: np.random.Generator) -> DiceRaceParams:
    """The parameters of one race, every rule switched on or off by ``rng`` (consumed in a fixed order)."""
    track, pieces = int(rng.integers(10, 19)), int(rng.integers(1, 4))
    faces = tuple(sorted(int(f) for f in rng.choice(np.arange(1, 7), size=int(rng.integers(3, 6)), replace=False)))
    weights = tuple(int(w) for w in rng.integers(1, 4, size=len(faces)))
    capture = bool(rng.random() < 0.6)
    free = [int(s) for s in rng.permutation(np.arange(2, track))]  # squares for safe squares and shortcut feet
    safe = tuple(sorted(free.pop() for _ in range(int(rng.integers(1, 3))))) if capture and rng.random() < 0.7 else ()
    feet = [free.pop() for _ in range(int(rng.integers(0, 3)))]
    shortcuts: list[tuple[int, int]] = []
    for foot in feet:
        taken = set(safe) | set(feet) | {h for _, h in shortcuts}
        heads = [h for h in range(foot + 2, track + 1) if h not in taken]
        if heads:
            shortcuts.append((foot, int(rng.choice(heads))))
    return DiceRaceParams(track=track, pieces=pieces, faces=faces, weights=weights, capture=capture, safe=safe,
                          shortcuts=tuple(sorted(shortcuts)), exact_finish=bool(rng.random() < 0.5),
                          extra_turn=bool(rng.random() < 0.4), roll_limit=4 * pieces * (track + 1))


# ---------------------------------------------------------------------------------------------------
# The engine


def check(p: DiceRaceParams) -> None:
    """Refuses parameters the engine cannot play, in one line (``check_params``)."""
    feet, heads = [f for f, _ in p.shortcuts], [h for _, h in p.shortcuts]
    check_params(FAMILY, {
        "track must be >= 2 and pieces >= 1": p.track < 2 or p.pieces < 1,
        "faces must be distinct and positive": len(set(p.faces)) != len(p.faces) or not p.faces
            or min(p.faces) < 1,
        "weights must be positive, one per face": len(p.weights) != len(p.faces) or min(p.weights, default=0) < 1,
        "safe squares must be on the track, and only with captures":
            any(not 1 <= s <= p.track for s in p.safe) or (bool(p.safe) and not p.capture),
        "shortcuts must go forward on the track from distinct squares that are no shortcut's end":
            any(not 1 <= f < h <= p.track for f, h in p.shortcuts) or len(set(feet)) != len(feet)
            or bool(set(feet) & set(heads)),
        "roll_limit must be >= 1": p.roll_limit < 1,
    })


def build_game(name: str, params: DiceRaceParams) -> type[pyspiel.Game]:
    """An OpenSpiel game class (no parameters of its own) playing ``params``, registered as ``name``."""
    check(params)
    gtype = game_type(name, f"{name} (generated {FAMILY} game)", chance=True)
    f = facts(params)
    info = pyspiel.GameInfo(num_distinct_actions=f["num_distinct_actions"], max_chance_outcomes=f["max_chance_outcomes"],
                            num_players=2, min_utility=-1.0, max_utility=1.0, utility_sum=0.0,
                            max_game_length=f["max_game_length"])
    return register_game(gtype, info, DiceRaceState, params, f"DiceRaceGame_{name}")


class DiceRaceState(SharedView, pyspiel.State):
    """Each player's piece squares (sorted; 0 home, ``track + 1`` finished), the mover, the roll, the rolls."""

    def __init__(self, game: pyspiel.Game, params: DiceRaceParams):
        super().__init__(game)
        self.p = params
        self.pieces = [[0] * params.pieces, [0] * params.pieces]
        self.to_move = 0
        self.roll: int | None = None
        self.rolls = 0
        self.winner: int | None = None
        self.log: list[str] = []  # every action so far, as the rules write it (the information state)

    def current_player(self) -> int:
        if self.is_terminal():
            return pyspiel.PlayerId.TERMINAL
        return pyspiel.PlayerId.CHANCE if self.roll is None else self.to_move

    def chance_outcomes(self) -> list[tuple[int, float]]:
        total = sum(self.p.weights)
        return [(f, w / total) for f, w in zip(self.p.faces, self.p.weights, strict=True)]

    def destination(self, square: int) -> int | None:
        """Where the mover's piece on ``square`` ends with the current roll, or None if it may not move."""
        assert self.roll is not None
        dest = square + self.roll
        if dest > self.p.finish:
            if self.p.exact_finish:
                return None
            dest = self.p.finish
        dest = dict(self.p.shortcuts).get(dest, dest)
        if dest != self.p.finish and dest in self.pieces[self.to_move]:
            return None
        return dest

    def _legal_actions(self, player: int) -> list[int]:
        moves = sorted({s for s in self.pieces[player] if s != self.p.finish and self.destination(s) is not None})
        return moves or [self.p.pass_action]

    def _apply_action(self, action: int) -> None:
        if self.is_terminal():
            raise ValueError(f"{self.get_game()}: the game is over; action {action} cannot be played")
        if self.roll is None:
            if action not in self.p.faces:
                raise ValueError(f"{self.get_game()}: {action} is not a face of the die")
            self.log.append(f"roll {action}")
            self.roll, self.rolls = action, self.rolls + 1
            return
        if action not in self._legal_actions(self.to_move):
            raise ValueError(f"{self.get_game()}: action {action} is not legal in {self}")
        self.log.append(action_name(self.p, action))
        if action != self.p.pass_action:
            self._move(action)
        again = self.p.extra_turn and self.roll == max(self.p.faces) and self.winner is None
        self.to_move = self.to_move if again else 1 - self.to_move
        self.roll = None

    def _move(self, square: int) -> None:
        dest = self.destination(square)
        assert dest is not None
        mine, theirs = self.pieces[self.to_move], self.pieces[1 - self.to_move]
        mine[mine.index(square)] = dest
        mine.sort()
        if self.p.capture and dest not in self.p.safe and dest != self.p.finish and dest in theirs:
            self.pieces[1 - self.to_move] = sorted(0 if s == dest else s for s in theirs)
        if all(s == self.p.finish for s in mine):
            self.winner = self.to_move

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            return f"roll {action}"
        return action_name(self.p, action)

    def is_terminal(self) -> bool:
        return self.winner is not None or (self.roll is None and self.rolls >= self.p.roll_limit)

    def returns(self) -> list[float]:
        if self.winner is None:
            return [0.0, 0.0]
        return [1.0, -1.0] if self.winner == 0 else [-1.0, 1.0]

    def observation_dict(self) -> dict[str, Any]:
        """The whole position (both players see the same)."""
        return {"pieces": [list(p) for p in self.pieces], "to_move": self.to_move, "roll": self.roll,
                "rolls": self.rolls}

    def __str__(self) -> str:
        return json.dumps(self.observation_dict(), separators=(",", ":"))


def action_name(params: DiceRaceParams, action: int) -> str:
    """A player's action as the rules write it: ``"enter"``, ``"move 5"`` (the piece on square 5) or ``"pass"``."""
    if action == params.pass_action:
        return "pass"
    return "enter" if action == 0 else f"move {action}"


# ---------------------------------------------------------------------------------------------------
# The rules, one sentence per parameter in each tier


def rules(params: DiceRaceParams) -> list[Rule]:
    """Each parameter's rule in both tiers, in the order the rules texts give them."""
    p = params
    track = (f"The track is a row of squares numbered 1 to {p.track}. Each piece starts at home, before square "
             f"1, and races to the finish, just past square {p.track}.")
    pieces = f"Each player has {p.pieces} piece{'s' if p.pieces > 1 else ''}; the players share the one track."
    return [
        Rule("track", p.track, track, track + f" Squares are written as numbers: 0 is home, {p.finish} the finish."),
        Rule("pieces", p.pieces, pieces, pieces),
        Rule("dice", [list(p.faces), list(p.weights)], _die_sentence(p), _die_sentence(p) +
             " Chance actions are `roll <face>` (id = the face)."),
        Rule("moving", "fixed", _moving_sentence(), _moving_sentence() + f" Actions: `enter` (id 0), `move <square>` "
             f"(id = the square), `pass` (id {p.pass_action})."),
        Rule("exact_finish", p.exact_finish, _finish_sentence(p), _finish_sentence(p)),
        Rule("shortcuts", [list(s) for s in p.shortcuts], _shortcut_sentence(p), _shortcut_sentence(p)),
        Rule("capture", p.capture, _capture_sentence(p), _capture_sentence(p)),
        Rule("safe", list(p.safe), _safe_sentence(p), _safe_sentence(p)),
        Rule("extra_turn", p.extra_turn, _extra_sentence(p), _extra_sentence(p)),
        Rule("goal", "fixed", _goal_sentence(), _goal_sentence()),
        Rule("roll_limit", p.roll_limit, _limit_sentence(p), _limit_sentence(p)),
    ]


def _die_sentence(p: DiceRaceParams) -> str:
    faces = ", ".join(str(f) for f in p.faces)
    if len(set(p.weights)) == 1:
        return f"Each turn begins with a roll of a die whose faces are {faces}, each as likely as the others."
    total = sum(p.weights)
    odds = ", ".join(f"{f} with chance {Fraction(w, total)}" for f, w in zip(p.faces, p.weights, strict=True))
    return f"Each turn begins with a roll of an uneven die whose faces come up as follows: {odds}."


def _moving_sentence() -> str:
    return ("The mover then picks one of its pieces not yet finished and moves it forward by the number rolled "
            "(a piece at home enters on the square of that number); a piece may not end its move on a square "
            "where another piece of its owner stands (home and the finish excepted), and a player with no "
            "piece that may move passes.")


def _finish_sentence(p: DiceRaceParams) -> str:
    if p.exact_finish:
        return (f"A piece reaches the finish only by an exact roll (counting the finish as square {p.finish}); a "
                f"roll that would carry it further does not allow that piece to move.")
    return f"A roll that carries a piece past square {p.track} brings it to the finish."


def _shortcut_sentence(p: DiceRaceParams) -> str:
    if not p.shortcuts:
        return "There are no shortcuts."
    pairs = "; ".join(f"from square {f} on to square {h}" for f, h in p.shortcuts)
    return (f"Shortcuts: a piece whose move ends on the first square of a pair goes straight on to the second "
            f"({pairs}); the move then counts as ending there.")


def _capture_sentence(p: DiceRaceParams) -> str:
    if p.capture:
        return ("A piece that ends its move on a square holding an opponent's piece captures it: the captured "
                "piece goes back home.")
    return "There are no captures: pieces of both players may share a square."


def _safe_sentence(p: DiceRaceParams) -> str:
    if not p.safe:
        return "No square is safe." if p.capture else "There are no safe squares (nothing is ever captured)."
    names = ", ".join(str(s) for s in p.safe)
    return f"Square{'s' if len(p.safe) > 1 else ''} {names} {'are' if len(p.safe) > 1 else 'is'} safe: no piece " \
           f"is captured there, and pieces of both players may share it."


def _extra_sentence(p: DiceRaceParams) -> str:
    if p.extra_turn:
        return (f"A player who rolls a {max(p.faces)} (the highest face) rolls again after its move or pass, "
                f"unless it has just won.")
    return "After the move (or pass) the turn goes to the other player."


def _goal_sentence() -> str:
    return "The first player to bring all its pieces to the finish wins and scores +1; the other scores -1."


def _limit_sentence(p: DiceRaceParams) -> str:
    return f"If nobody has won when {p.roll_limit} rolls have been made in all, the game is drawn (0 each)."


INTRO = "A race game for two players, each moving pieces along one shared track by the roll of a die."
SECTIONS = [("Board and pieces", ["track", "pieces"]), ("A turn", ["dice", "moving", "extra_turn"]),
            ("Finishing, shortcuts and captures", ["exact_finish", "shortcuts", "capture", "safe"]),
            ("Winning", ["goal", "roll_limit"])]
KNOW = "Both players see every piece and every roll. The first player takes the first turn."


def spec_format(params: DiceRaceParams) -> str:
    """The spec tier's formats: the observation JSON and the action ids."""
    example = {"pieces": [[0] * params.pieces, [0] * params.pieces], "to_move": 0, "roll": None, "rolls": 0}
    return ("The observation (the same for both players) is a JSON object such as "
            f"`{json.dumps(example, separators=(',', ':'))}`: `pieces` lists each player's piece squares in "
            f"increasing order (0 home, {params.finish} finished); `to_move` is the player to move or about to "
            "roll; `roll` the number rolled this turn (null before the roll); `rolls` the rolls made so far. "
            f"There are {params.pass_action + 1} action ids; the legal ones are listed in increasing id order. "
            "Returns are 0 until the end.")


def facts(params: DiceRaceParams) -> dict[str, Any]:
    """The engine's facts: players, chance, information, the most actions a game can take."""
    return {"players": 2, "chance": True, "information": "perfect", "outcome": "win/draw/loss",
            "num_distinct_actions": params.pass_action + 1, "max_chance_outcomes": max(params.faces) + 1,
            "max_game_length": 2 * params.roll_limit}


RULES_ON = ("uneven_die", "capture", "safe_squares", "shortcuts", "exact_finish", "extra_turn", "several_pieces")


def rules_on(params: DiceRaceParams) -> list[str]:
    """The rules beyond a plain one-piece race with a fair die that ``params`` switches on."""
    on = {"uneven_die": len(set(params.weights)) > 1, "capture": params.capture, "safe_squares": bool(params.safe),
          "shortcuts": bool(params.shortcuts), "exact_finish": params.exact_finish, "extra_turn": params.extra_turn,
          "several_pieces": params.pieces > 1}
    return [rule for rule in RULES_ON if on[rule]]
