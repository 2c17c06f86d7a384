"""Worlds of OpenSpiel's crazy eights consistent with one player's observations: the others' cards redrawn.

A player of crazy eights sees its own hand (the cards it was dealt and drew), the card on the pile and the
suit to follow, and how many cards each player holds; nothing while cards are dealt (the engine's
observation is empty then). So it knows its own cards, the starting card and every card played, but not
the others' cards, nor when a card an opponent played came into its hand, nor the eights turned up and put
back before the starting card.

A world redraws all of that. Every order of the 52 distinct cards is equally likely to be dealt, so with the
players' actions weighted alike whatever the hidden cards (their policies do not read them), the posterior
is uniform over the deal sequences consistent with the observations:

* the player's own opening cards in any order over its opening deal events;
* each card an opponent played given to one of that opponent's deal events before the play, the plays in
  turn each picking uniformly among the events still free (the events open to a play include those open to
  every earlier play of that opponent, so each has the same number of choices whatever the earlier picks:
  the picks are uniform over the valid assignments);
* the opponents' other deal events a uniformly random sequence of the cards nobody has seen;
* each eight turned back an eight not in an opening hand: there are ``free`` of them, ``free ** k`` ways
  for ``k`` eights turned back, so an assignment is kept with probability ``(free / most) ** k`` (``most``:
  the eights not in the player's own opening hand), which weights the assignments by their number of ways.

Served: one deck (at most five players), no special cards, no reshuffle (``crazy_eights_problem``).
"""

from __future__ import annotations

import numpy as np
import pyspiel

from cwm.types import CHANCE
from planners.gt_resample import ResampleFailure

NUM_CARDS = 52
EIGHT_RANK = 6  # a card's id is rank * 4 + suit, ranks from 2 (0) to ace (12)
DEALER_BASE = 52  # the chance action "Decide Player p to be the dealer" is DEALER_BASE + p
_MAX_TRIES = 10_000  # assignments drawn before an eight-weighted draw gives up


def crazy_eights_problem(game: pyspiel.Game) -> str:
    """Why ``CrazyEightsWorlds`` does not serve these crazy eights parameters (``""`` when it does)."""
    params = game.get_parameters()
    if params.get("use_special_cards", False):
        return "the crazy eights world sampler does not model the special cards (use_special_cards=false)"
    if params.get("reshuffle", False):
        return "the crazy eights world sampler does not model reshuffling the pile (reshuffle=false)"
    if game.num_players() > 5:
        return "the crazy eights world sampler serves one deck (at most five players)"
    return ""


class CrazyEightsWorlds:
    """Draws crazy eights worlds consistent with one player's observations (a ``Sampler`` for ISMCTS).

    Args:
      game: a crazy eights game that ``crazy_eights_problem`` accepts.

    Raises:
      ValueError: the game is not one this sampler serves.

    Randomness: each draw uses only the ``np.random.Generator`` it is given.
    """

    def __init__(self, game: pyspiel.Game):
        kind = game.get_type().short_name
        problem = crazy_eights_problem(game) if kind == "crazy_eights" else "it is not crazy eights"
        if problem:
            raise ValueError(f"CrazyEightsWorlds cannot serve {game}: {problem}")
        self.game = game
        self.players = game.num_players()
        self.opening = self.players * (7 if self.players == 2 else 5)  # opening deal events

    def __call__(self, state: pyspiel.State, player: int, rng: np.random.Generator) -> pyspiel.State:
        """A fresh state whose history gives ``player`` the same observations as ``state``'s."""
        steps = [(int(s.player), int(s.action)) for s in state.full_history()]
        replacements = self.replacements(steps, player, rng)
        world = self.game.new_initial_state()
        for i, (_, action) in enumerate(steps):
            world.apply_action(replacements.get(i, action))
        return world

    def receivers(self, steps: list[tuple[int, int]]) -> list[int | None]:
        """Per step, the player a chance card goes to (``None`` for the dealer's choice, a card turned up at
        the start and the players' own moves): the opening deal goes round from the dealer's left, a drawn
        card to whoever drew."""
        out: list[int | None] = []
        dealer = mover = None
        for i, (who, action) in enumerate(steps):
            if i == 0:
                dealer = action - DEALER_BASE
                out.append(None)
            elif who != CHANCE:
                mover = who
                out.append(None)
            elif i <= self.opening:
                assert dealer is not None
                out.append((dealer + i) % self.players)
            else:
                out.append(mover)  # None while the starting card is turned up (nobody has moved yet)
        return out

    def replacements(self, steps: list[tuple[int, int]], player: int,
                     rng: np.random.Generator) -> dict[int, int]:
        """The deal events redrawn (history position -> card) for one world."""
        receivers = self.receivers(steps)
        flips = [i for i, r in enumerate(receivers) if r is None and i > 0 and steps[i][0] == CHANCE]
        if not flips:
            raise ResampleFailure("the history has not reached the first play (no starting card turned up)")
        turned_back, starter = flips[:-1], steps[flips[-1]][1]
        mine = [i for i, r in enumerate(receivers) if r == player]
        my_opening = [i for i in mine if i <= self.opening]
        my_eights = sum(_is_eight(steps[i][1]) for i in my_opening)
        most = 4 - my_eights
        for _ in range(_MAX_TRIES):
            out = self._assignment(steps, receivers, player, starter, rng)
            out.update(zip(my_opening, rng.permutation([steps[i][1] for i in my_opening]).tolist()))
            if not turned_back:
                return out
            opening = {out.get(i, steps[i][1]) for i in range(1, self.opening + 1)}
            free = [c for c in range(EIGHT_RANK * 4, EIGHT_RANK * 4 + 4) if c not in opening and c != starter]
            if free and rng.random() < (len(free) / most) ** len(turned_back):
                out.update({i: int(free[rng.integers(len(free))]) for i in turned_back})
                return out
        raise ResampleFailure(f"no assignment kept in {_MAX_TRIES} tries for the eights turned back")

    def _assignment(self, steps: list[tuple[int, int]], receivers: list[int | None], player: int, starter: int,
                    rng: np.random.Generator) -> dict[int, int]:
        """The opponents' deal events: the cards they played first, then the unseen cards at random."""
        out: dict[int, int] = {}
        played: set[int] = set()
        for t, (who, action) in enumerate(steps):
            if who in (CHANCE, player) or action >= NUM_CARDS:
                continue
            free = [i for i in range(t) if receivers[i] == who and i not in out]
            if not free:
                raise ResampleFailure(f"player {who} played {action} at step {t} with no card dealt to place it")
            out[free[int(rng.integers(len(free)))]] = action
            played.add(action)
        seen = played | {steps[i][1] for i, r in enumerate(receivers) if r == player} | {starter}
        rest = [i for i, r in enumerate(receivers) if r is not None and r != player and i not in out]
        unseen = [c for c in range(NUM_CARDS) if c not in seen]
        if len(unseen) < len(rest):
            raise ResampleFailure(f"{len(rest)} hidden deal events but only {len(unseen)} unseen cards")
        out.update(zip(rest, rng.permutation(unseen)[: len(rest)].tolist()))
        return out


def _is_eight(card: int) -> bool:
    return card // 4 == EIGHT_RANK
