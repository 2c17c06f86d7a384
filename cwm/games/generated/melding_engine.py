"""The engine of the melding family (``cwm.games.generated.melding``): one state class for every drawn rule set."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pyspiel

from cwm.games.generated.common import card_name, draw_cards

if TYPE_CHECKING:
    from cwm.games.generated.melding import MeldParams

DRAW, TAKE = 0, 1


def extends(card: int, meld: list[int], ranks: int) -> bool:
    """Whether ``card`` extends ``meld``: a set's rank, or a run's suit just below or above it."""
    meld_ranks = sorted(c % ranks for c in meld)
    if len(set(meld_ranks)) == 1:
        return card % ranks == meld_ranks[0]
    same_suit = card // ranks == meld[0] // ranks
    return same_suit and card % ranks in (meld_ranks[0] - 1, meld_ranks[-1] + 1)


class MeldState(pyspiel.State):
    """Hands, stock (the cards not yet seen by anyone), discard pile, melds on the table, the turn and its
    phase, what ended the game, and each player's log of what it has seen (its information state)."""

    def __init__(self, game: pyspiel.Game, params: MeldParams):
        super().__init__(game)
        self.p = params
        self.hands: list[list[int]] = [[], []]
        self.used: set[int] = set()  # cards out of the stock
        self.pile: list[int] = []
        self.table: list[list[Any]] = []  # [owner, sorted card ids] in the order laid
        self.melded = [0, 0]  # ranks each player has put on the table
        self.turns = 0
        self.phase = "deal"  # deal, draw, card (the stock's card for the drawer), play, over
        self.ended: list[Any] | None = None  # [how, who]: out, knock (by whom), stock, turns (None)
        self.logs: list[list[str]] = [[], []]

    def current_player(self) -> int:
        if self.phase == "over":
            return pyspiel.PlayerId.TERMINAL
        return pyspiel.PlayerId.CHANCE if self.phase in ("deal", "card") else self.turns % 2

    def chance_outcomes(self) -> list[tuple[int, float]]:
        left = [c for c in range(self.p.deck) if c not in self.used]
        return [(c, 1.0 / len(left)) for c in left]

    def _legal_actions(self, player: int) -> list[int]:
        if self.phase == "draw":
            return [DRAW] + ([TAKE] if self.p.take_discard and self.pile else [])
        hand, r = self.hands[player], self.p.ranks
        out = [self.p.discard + c for c in hand]
        if self.p.layoff:
            out += [self.p.lay + c for c in hand if any(extends(c, m, r) for _, m in self.table)]
        out += [self.p.meld + i for i, m in enumerate(self.p.all_melds) if all(c in hand for c in m)]
        if self.p.knock_limit and self.hand_ranks(player) <= self.p.knock_limit:
            out.append(self.p.knock)
        return sorted(out)

    def hand_ranks(self, player: int) -> int:
        return sum(c % self.p.ranks + 1 for c in self.hands[player])

    def _apply_action(self, action: int) -> None:
        if self.is_terminal():
            raise ValueError(f"{self.get_game()}: the game is over; action {action} cannot be played")
        if self.phase in ("deal", "card"):
            if action in self.used or not 0 <= action < self.p.deck:
                raise ValueError(f"{self.get_game()}: card {action} is not in the stock")
            self._chance(action)
            return
        player = self.current_player()
        if action not in self._legal_actions(player):
            raise ValueError(f"{self.get_game()}: action {action} is not legal for player {player}")
        words = self._action_to_string(player, action)
        seen = words if action != DRAW else "draw"
        self.logs[player].append(words)
        self.logs[1 - player].append(f"opponent: {seen}")
        self._play(player, action)

    def _chance(self, card: int) -> None:
        self.used.add(card)
        name = card_name(card, self.p.ranks)
        dealt = len(self.used) - 1
        if self.phase == "card" or dealt < 2 * self.p.hand:
            to = self.turns % 2 if self.phase == "card" else dealt % 2
            self.hands[to].append(card)
            self.logs[to].append(f"you get {name}")
            self.phase = "play" if self.phase == "card" else "deal"
        else:
            self.pile.append(card)
            for log in self.logs:
                log.append(f"turned up {name}")
        if self.phase == "deal" and len(self.used) == 2 * self.p.hand + 1:
            self.phase = "draw"

    def _play(self, player: int, action: int) -> None:
        p, hand = self.p, self.hands[player]
        if action == DRAW:
            self.phase = "card"
        elif action == TAKE:
            hand.append(self.pile.pop())
            self.phase = "play"
        elif action == p.knock:
            self._end("knock", player)
        elif action >= p.meld:
            cards = p.all_melds[action - p.meld]
            self._to_table(player, list(cards), None)
        elif action >= p.lay:
            card = action - p.lay
            meld = next(m for _, m in self.table if extends(card, m, p.ranks))
            self._to_table(player, [card], meld)
        else:
            hand.remove(action - p.discard)
            self.pile.append(action - p.discard)
            self._next_turn(player)

    def _to_table(self, player: int, cards: list[int], meld: list[int] | None) -> None:
        for c in cards:
            self.hands[player].remove(c)
        if meld is None:
            self.table.append([player, cards])
        else:
            meld.extend(cards)
            meld.sort()
        self.melded[player] += sum(c % self.p.ranks + 1 for c in cards)
        if not self.hands[player]:
            self._end("out", player)

    def _next_turn(self, player: int) -> None:
        if not self.hands[player]:
            self._end("out", player)
            return
        self.turns += 1
        self.phase = "draw"
        if self.turns >= self.p.max_turns:
            self._end("turns", None)
        elif len(self.used) == self.p.deck:
            self._end("stock", None)

    def _end(self, how: str, who: int | None) -> None:
        self.ended, self.phase = [how, who], "over"

    def scores(self) -> list[int]:
        """Each player's score: ranks melded, less the ranks left in hand times ``deadwood``, plus the bonus."""
        out = []
        for player in range(2):
            bonus = self.p.out_bonus if self.ended == ["out", player] else 0
            out.append(self.melded[player] - self.p.deadwood * self.hand_ranks(player) + bonus)
        return out

    def _action_to_string(self, player: int, action: int) -> str:
        p = self.p
        if player == pyspiel.PlayerId.CHANCE:
            return f"card {card_name(action, p.ranks)}"
        if action in (DRAW, TAKE):
            return "draw" if action == DRAW else "take"
        if action == p.knock:
            return "knock"
        if action >= p.meld:
            return "meld " + " ".join(card_name(c, p.ranks) for c in p.all_melds[action - p.meld])
        if action >= p.lay:
            return f"lay off {card_name(action - p.lay, p.ranks)}"
        return f"discard {card_name(action - p.discard, p.ranks)}"

    def is_terminal(self) -> bool:
        return self.phase == "over"

    def returns(self) -> list[float]:
        if not self.is_terminal():
            return [0.0, 0.0]
        s = self.scores()
        return [float(s[0] - s[1]), float(s[1] - s[0])]

    def observation_for(self, player: int) -> dict[str, Any]:
        """What ``player`` sees now: its hand, the pile's top, the table, the counts; never the other hand."""
        r = self.p.ranks
        top = card_name(self.pile[-1], r) if self.pile else None
        hand = [card_name(c, r) for c in sorted(self.hands[player])]
        over = self.is_terminal()  # the end shows both hands and the scores
        return {"hand": hand, "pile_top": top, "pile": len(self.pile), "stock": self.p.deck - len(self.used),
                "table": [[o, [card_name(c, r) for c in m]] for o, m in self.table],
                "other_hand": ([card_name(c, r) for c in sorted(self.hands[1 - player])] if over
                               else len(self.hands[1 - player])),
                "to_move": self.turns % 2, "phase": self.phase, "turns": self.turns,
                "scores": self.scores() if over else None}

    def information_for(self, player: int) -> dict[str, Any]:
        """Everything ``player`` has seen, in order (the other player's draws from the stock unnamed)."""
        return {"player": player, "seen": list(self.logs[player]), "now": self.observation_for(player)}

    def __str__(self) -> str:
        r = self.p.ranks
        return json.dumps({"hands": [[card_name(c, r) for c in sorted(h)] for h in self.hands],
                           "pile": [card_name(c, r) for c in self.pile],
                           "table": [[o, [card_name(c, r) for c in m]] for o, m in self.table],
                           "turns": self.turns, "phase": self.phase, "ended": self.ended}, separators=(",", ":"))

    def resample_from_infostate(self, player_id: int, probability_sampler: Any) -> MeldState:
        """A state with the same information state for ``player_id``: the cards the other player holds unseen
        are redrawn, without replacement, from the cards ``player_id`` has not seen, with
        ``probability_sampler()`` (floats in [0, 1)). Every consistent deal can come out."""
        history = [int(a) for a in self.history()]
        hidden, known = self._unseen_steps(history, player_id)
        pool = [c for c in range(self.p.deck) if c not in known]
        redrawn = iter(draw_cards(pool, len(hidden), probability_sampler))
        state = self.get_game().new_initial_state()
        for i, action in enumerate(history):
            state.apply_action(next(redrawn) if i in hidden else action)
        return state

    def _unseen_steps(self, history: list[int], player: int) -> tuple[set[int], set[int]]:
        """(the chance steps whose card went to the other player and has not been shown since, the cards
        ``player`` has seen: its own, the turned-up one, and every card put on the pile or the table)."""
        state = self.get_game().new_initial_state()
        hidden: dict[int, int] = {}  # card -> the step that gave it to the other player
        known: set[int] = set()
        for i, action in enumerate(history):
            mover = state.current_player()
            if state.is_chance_node():
                to = state.turns % 2 if state.phase == "card" else len(state.used) % 2
                turned_up = state.phase == "deal" and len(state.used) == 2 * self.p.hand
                if to == 1 - player and not turned_up:
                    hidden[action] = i
                else:
                    known.add(action)
                state.apply_action(action)
                continue
            before = set(state.hands[mover])
            state.apply_action(action)
            for card in before - set(state.hands[mover]):  # cards put on the pile or the table are shown
                known.add(card)
                hidden.pop(card, None)
        return set(hidden.values()), known
